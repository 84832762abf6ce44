"""Reference agents (model-free solvers) that bound the benchmark.

    inspect eval benchmarks/formulacode --model none \\
        --solver benchmarks/formulacode/agents.py@oracle --limit 3

``oracle`` applies the expert patch (advantage ~0, speedup > 1), ``noop`` changes nothing
(speedup ~1), ``break`` applies the expert patch and then makes every function the expert
touched return 0 at once — faster still, but wrong, so the correctness gate must revert it
to the baseline (speedup 1, reward -1).
"""

from __future__ import annotations

import ast
import re

from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import sandbox

from benchmarks.formulacode.prompts import SENTINEL

REPO = "/workspace/repo"


async def _apply_expert(state: TaskState) -> None:
    path = "/tmp/fc_oracle.patch"
    await sandbox().write_file(path, str(state.metadata["patch"]))
    done = await sandbox().exec(["git", "apply", "--whitespace=nowarn", path], cwd=REPO)
    await sandbox().exec(["rm", "-f", path])
    if not done.success:
        raise RuntimeError(f"expert patch does not apply: {done.stderr}")


async def _finish(state: TaskState, note: str) -> TaskState:
    await sandbox().exec(["touch", SENTINEL])
    state.completed = True
    state.metadata["reference_agent"] = note
    return state


@solver
def oracle() -> Solver:
    """Apply the expert's patch (the PR diff)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        await _apply_expert(state)
        return await _finish(state, "oracle")

    return solve


@solver
def noop() -> Solver:
    """Change nothing."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return await _finish(state, "noop")

    return solve


def short_circuit(source: str) -> str:
    """Insert ``return 0`` as the first statement of every function in ``source``."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    inserts: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0]
            indent = re.match(r"\s*", lines[first.lineno - 1]).group(0)  # type: ignore[union-attr]
            inserts.append((first.lineno - 1, f"{indent}return 0\n"))
    for index, text in sorted(inserts, reverse=True):
        lines.insert(index, text)
    return "".join(lines)


def patched_files(patch: str) -> list[str]:
    """Files a unified diff writes (``+++ b/PATH``)."""
    return [m.group(1) for m in re.finditer(r"^\+\+\+ b/(\S+)", patch, flags=re.M)]


@solver(name="break")
def break_() -> Solver:
    """Expert patch, then every touched function returns 0 immediately (fails the gate)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        await _apply_expert(state)
        for rel in patched_files(str(state.metadata["patch"])):
            if rel.endswith(".py"):
                path = f"{REPO}/{rel}"
                await sandbox().write_file(path, short_circuit(await sandbox().read_file(path)))
        return await _finish(state, "break")

    return solve
