"""What the fault-injection tests share: a task that needs no model call.

mockllm's default output counts its tokens with a tokenizer that it downloads; these tests
stay offline, so the solver writes the output itself.
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import match
from inspect_ai.solver import Generate, Solver, TaskState, solver


@solver
def answer() -> Any:
    """Right on even sample ids, wrong on odd ones; no model call."""

    async def solve(state: TaskState, generate_: Generate) -> TaskState:
        text = str(state.target.text) if int(str(state.sample_id)) % 2 == 0 else "no"
        state.output = ModelOutput.from_content("mockllm/model", text)
        return state

    return solve


def offline_task(name: str, n: int, before: list[Solver] | None = None) -> Task:
    """``n`` samples with integer ids 1..n, scored by ``match``, answered by :func:`answer`
    after the ``before`` solvers."""
    return Task(dataset=[Sample(input=f"say {i}", target=f"say {i}", id=i)
                         for i in range(1, n + 1)],
                solver=[*(before or []), answer()], scorer=match(), name=name)
