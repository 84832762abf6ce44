"""Scripted policies for program evolution (tests, studies, reference runs).

``scripted/evolve-improver`` proposes an edit that raises ``ITERATIONS`` in the parent
program (the shipped initial programs run that many steps of seeded, accept-only hill
climbing, so more iterations never make the solution worse): a model that always
proposes improving diffs. ``scripted/evolve-mixed`` picks a behaviour from the response's
seed (``seed % 4``: improve, no diff, identical child, crashing child), so a test knows
which lazy penalty every response must get. ``scripted/evolve-rewriter`` makes the same
improvement but answers with the whole program in a code block and no diff (a model that
never writes diffs: ThetaEvolve's full-rewrite fallback is what makes it useful).
``-M fail_after=N -M run_id=X`` makes any of them raise after N calls of run X: a run that
dies mid-way, for resume tests.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig
from inspect_ai.tool import ToolInfo

from harness.models.scripted import PolicyResult, arg_str, last_user_text, scripted_policy

MODES = ("improve", "no_diff", "identical", "error")
DEFAULT_INCREMENT = 200
_ITERATIONS = re.compile(r"^ITERATIONS = (\d+)[ \t]*$", re.MULTILINE)
_PARENT = re.compile(r"Current program[^\n]*\n```python\n(.*?)```", re.DOTALL)
_CALLS: Counter[str] = Counter()


def _parent_program(input: list[ChatMessage]) -> str:
    match = _PARENT.search(last_user_text(input))
    return match.group(1) if match else ""


def _block(search: str, replace: str) -> str:
    return f"<<<<<<< SEARCH\n{search}\n=======\n{replace}\n>>>>>>> REPLACE"


def _maybe_fail(args: dict[str, Any]) -> None:
    limit = args.get("fail_after")
    if limit is None:
        return
    run = arg_str(args, "run_id", "default")
    _CALLS[run] += 1
    if _CALLS[run] > int(limit):
        raise RuntimeError(f"scripted crash after {limit} calls (run {run})")


def propose(mode: str, program: str, seed: int, increment: int) -> str:
    """The reply of one behaviour for ``program`` (pure: used by tests to predict it)."""
    match = _ITERATIONS.search(program)
    if mode == "no_diff" or match is None:
        return "I would keep the program as it is."
    line = match.group(0)
    n = int(match.group(1))
    if mode == "identical":
        return _block(line, line)
    if mode == "error":
        return _block(line, f"{line}\nraise RuntimeError('scripted failure')")
    bigger = n + increment * (1 + seed % 3)
    if mode == "rewrite":
        child = program.replace(line, f"ITERATIONS = {bigger}", 1)
        return f"Here is the whole improved program:\n```python\n{child}```"
    return "Run the hill climbing longer.\n" + _block(line, f"ITERATIONS = {bigger}")


@scripted_policy("evolve-improver")
def evolve_improver(input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig,
                    args: dict[str, Any]) -> PolicyResult:
    """Always propose raising ITERATIONS (by ``-M increment``, default 200, times 1-3)."""
    _maybe_fail(args)
    increment = int(args.get("increment", DEFAULT_INCREMENT))
    return propose("improve", _parent_program(input), config.seed or 0, increment)


@scripted_policy("evolve-mixed")
def evolve_mixed(input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig,
                 args: dict[str, Any]) -> PolicyResult:
    """Behaviour ``MODES[seed % 4]``: improve, no diff, identical child, crashing child."""
    _maybe_fail(args)
    seed = config.seed or 0
    increment = int(args.get("increment", DEFAULT_INCREMENT))
    return propose(MODES[seed % len(MODES)], _parent_program(input), seed, increment)


@scripted_policy("evolve-rewriter")
def evolve_rewriter(input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig,
                    args: dict[str, Any]) -> PolicyResult:
    """The improver's change, written as the whole program (no SEARCH/REPLACE block)."""
    _maybe_fail(args)
    increment = int(args.get("increment", DEFAULT_INCREMENT))
    return propose("rewrite", _parent_program(input), config.seed or 0, increment)
