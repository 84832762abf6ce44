"""The verifier-based scorer, plus what each model call cost in prompt tokens.

Nothing the model wrote is trusted: the store's action list (kept by the tools) is replayed
from the instance record by :func:`environments.household.verify`. Score keys:

* ``success``: 1 if the goal held at some point within the step limit;
* ``steps``: actions taken (valid or not); ``invalid``: actions the rules rejected;
* ``efficiency``: optimal length / step at which the goal was reached (0 unsolved);
* ``progress``: goal objects delivered / objects the goal needs (partial credit);
* ``prompt_tokens``: mean input tokens per model call in the sample (every call the agent
  made: actions, and a method's fill/update/summary calls), ``prompt_tokens_max`` the
  largest, ``model_calls`` how many. The per-call list is in the score's metadata.

Prompt lengths come from the sample's own transcript (:mod:`harness.prompt_cost`, the same
reading every agentic benchmark's ``prompt_cost`` scorer uses), so they measure what each
agent really sent, whatever its prompt layout.
"""

from __future__ import annotations

from inspect_ai.log import transcript
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState

from benchmarks.paper_tasks.household.tools import ACTIONS_KEY, SPEC_KEY
from environments.household import Instance, verify
from harness.prompt_cost import prompt_cost_values, prompt_lengths

__all__ = ["household_score"]


@scorer(metrics={"*": [mean(), stderr()]})
def household_score() -> Scorer:
    """Success, steps, invalid actions, efficiency, progress and prompt length per call."""

    async def score(state: TaskState, target: Target) -> Score:
        inst = Instance.from_dict(state.store.get(SPEC_KEY) or state.metadata["instance"])
        taken: list[list[object]] = state.store.get(ACTIONS_KEY, [])
        actions = [str(a) for a, _ in taken]
        verdict = verify(inst, actions)
        optimal = int(state.metadata["optimal"])
        efficiency = optimal / verdict.solved_at if verdict.solved_at else 0.0
        lengths = prompt_lengths(list(transcript().events))
        calls = len(lengths)
        return Score(
            value={
                "success": float(verdict.success),
                "steps": float(verdict.steps),
                "invalid": float(verdict.invalid),
                "efficiency": float(efficiency),
                "progress": verdict.delivered / inst.goal.count,
                **prompt_cost_values(lengths),
            },
            answer="; ".join(actions),
            explanation=(f"{'solved' if verdict.success else 'not solved'} after "
                         f"{verdict.steps} actions ({verdict.invalid} invalid); optimal "
                         f"{optimal}; {calls} model calls"),
            metadata={"prompt_tokens_per_call": lengths},
        )

    return score
