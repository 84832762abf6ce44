"""Arithmetic: the suite's seconds-long self-test benchmark.

Seeded integer expressions (2-4 terms of + - *) with exact answers. An agent may use a
``calculator`` tool (a plain function) or, with ``-T sandbox=bwrap``, Inspect's ``python``
tool inside the bubblewrap sandbox. It exercises every layer of the suite end to end and
is the default benchmark of the demo and of the example factorial study.

    inspect eval benchmarks/arithmetic --model embedded/qwen2.5-coder-0.5b -T agent=generate
    inspect eval benchmarks/arithmetic --model scripted/arith-oracle -T n=50
    inspect eval harness/arithmetic --model scripted/arith-oracle -T prompt_style=terse
"""

from typing import Any, Literal

from inspect_ai import Task, task
from inspect_ai.agent import as_solver, react
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.solver import Solver, generate, system_message
from inspect_ai.tool import Tool, python

from benchmarks.arithmetic.scorer import exact_integer
from benchmarks.arithmetic.tools import calculator
from environments.arithmetic import generate_problems
from harness.plugins.benchmark import benchmark
from harness.tool_validity import tool_call_validity

DEFAULT_N = 20
DEFAULT_SEED = 0
PromptStyle = Literal["plain", "terse", "instructive"]
AgentKind = Literal["react", "generate"]

DEFAULT_PROMPT_STYLE: PromptStyle = "plain"
DEFAULT_AGENT: AgentKind = "react"
DEFAULT_MAX_TERMS = 4
DEFAULT_MESSAGE_LIMIT = 16
"""A react episode that has not submitted after 16 messages (about 7 tool rounds) ends and
scores 0: small models call the calculator, then repeat the call instead of submitting,
and without a limit one sample ran for 50+ turns."""

PROMPTS = {
    "plain": "Compute the value of {expression}.",
    "terse": "{expression} = ?",
    "instructive": (
        "Compute the value of the integer expression {expression}. Multiplication binds "
        "tighter than addition and subtraction. Reply with the final integer only."
    ),
}


def record_to_sample(record: dict[str, Any], prompt_style: str = DEFAULT_PROMPT_STYLE) -> Sample:
    """One problem record (see ``environments.arithmetic.Problem``) as an Inspect sample."""
    template = PROMPTS[prompt_style]
    return Sample(
        id=str(record["id"]),
        input=template.format(expression=record["expression"]),
        target=str(record["answer"]),
        metadata={"expression": record["expression"], "n_terms": int(record["n_terms"])},
    )


def _solver(agent: str, tools: list[Tool]) -> Solver:
    if agent == "generate":
        return generate()
    if agent == "react":
        return as_solver(
            react(
                prompt="Solve the arithmetic problem. Use the tools if they help, then submit "
                "the final integer.",
                tools=tools,
            )
        )
    raise ValueError(f"unknown agent {agent!r}: use 'react' or 'generate'")


@benchmark("arithmetic")
@task
def arithmetic(
    n: int = DEFAULT_N,
    seed: int = DEFAULT_SEED,
    prompt_style: PromptStyle = DEFAULT_PROMPT_STYLE,
    agent: AgentKind = DEFAULT_AGENT,
    max_terms: int = DEFAULT_MAX_TERMS,
    sandbox: str | None = None,
    message_limit: int = DEFAULT_MESSAGE_LIMIT,
) -> Task:
    """Seeded integer arithmetic problems, scored by exact match of the final integer.

    Args:
        n: Number of problems.
        seed: Generator seed (same seed, same problems, same ids).
        prompt_style: How the question is phrased: plain, terse or instructive.
        agent: ``react`` (tool-using agent with submit) or ``generate`` (one completion).
        max_terms: Maximum number of operands per expression (2..).
        sandbox: ``bwrap`` or ``docker`` to add Inspect's ``python`` tool run in that sandbox.
        message_limit: Messages per sample before a react episode is cut off (scores 0).
    """
    if prompt_style not in PROMPTS:
        raise ValueError(f"prompt_style must be one of {sorted(PROMPTS)}, got {prompt_style!r}")
    problems = generate_problems(n, seed=seed, max_terms=max_terms)
    samples = [record_to_sample(p.to_record(), prompt_style) for p in problems]
    tools: list[Tool] = [calculator()]
    if sandbox:
        tools.append(python(timeout=30))
    solver = _solver(agent, tools)
    if agent == "generate":
        solver = [system_message("Answer with the final integer."), solver]  # type: ignore[assignment]
    return Task(
        dataset=MemoryDataset(samples, name=f"arithmetic-s{seed}"),
        solver=solver,
        scorer=[exact_integer(), tool_call_validity()],
        sandbox=sandbox,
        message_limit=message_limit,
        version="1.1.0",
        metadata={"benchmark": "arithmetic"},
    )
