"""The score of an open problem: the verified objective of the final program.

The final answer is a program (the last python code block of the output, or the whole
output if it has none). It is run once more in the sandbox and its solution verified
exactly, so the score never trusts a number the solver reported. An answer that fails
scores the problem's trivial value (0 for the packing, 2 for the bound: what a constant
function achieves), with ``valid`` false in the metadata.

Two keys: ``objective`` (the verified value, in the problem's own direction) and
``gap_closed``, the share of the gap between the initial program and the best known value
that the answer closed (0 = no better than the start, 1 = the best known, negative =
worse). ``gap_closed`` is higher-is-better on every problem, so a study can pool problems.
The initial program's objective is measured in the sandbox like any answer, once per
problem and process. A third key, ``gap_to_best``, is the distance to the best known value
in the objective's units (``|best_known - objective|``, lower is better): the honest gap.

When the solver left a search summary in the sample's store (key ``thetaevolve/summary``,
written by program-evolution agents such as ThetaEvolve and its best-of-N baseline), its
search measures are copied into the score's metadata under ``search`` (the share of
responses that were valid SEARCH/REPLACE diffs, full rewrites, tokens used, best score per
step), so they reach the results frame with the score; the value itself never depends on it.
"""

from __future__ import annotations

import re

from inspect_ai.scorer import Score, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState

from benchmarks.open_problems.tools import DEFAULT_TIMEOUT_S, evaluate
from environments.open_problems import get_problem

SEARCH_SUMMARY_KEY = "thetaevolve/summary"
SEARCH_FIELDS = ("search", "steps_done", "stopped", "candidates", "outcomes", "responses",
                 "diff_share", "diff_found_share", "rewrite_share", "tokens_used",
                 "output_tokens", "token_budget", "best_score_per_step",
                 "best_objective_per_step", "initial_score", "best_score")
"""What the scorer copies from a solver's summary (everything small and numeric)."""
_CODE_BLOCK = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.DOTALL)


def final_program(completion: str) -> str:
    """The last python code block of ``completion`` (or all of it)."""
    blocks = _CODE_BLOCK.findall(completion)
    return blocks[-1] if blocks else completion


_INITIAL: dict[str, float] = {}


async def initial_objective(problem: str, timeout: int) -> float:
    """Verified objective of the shipped initial program (run once per process)."""
    if problem not in _INITIAL:
        spec = get_problem(problem)
        result = await evaluate(problem, spec.initial_program(), timeout)
        if not result["valid"]:
            raise RuntimeError(f"{problem}: the initial program fails: {result['reason']}")
        _INITIAL[problem] = float(result["objective"])
    return _INITIAL[problem]


def search_metadata(summary: object) -> dict[str, object] | None:
    """The :data:`SEARCH_FIELDS` of a solver summary (None when there is none)."""
    if not isinstance(summary, dict):
        return None
    picked: dict[str, object] = {k: summary[k] for k in SEARCH_FIELDS if k in summary}
    rl = summary.get("rl")
    if isinstance(rl, dict):
        picked["rl_checkpoint"] = rl.get("checkpoint")
        picked["rl_updates"] = [
            {k: row.get(k) for k in ("step", "reward_mean", "reward_std", "loss", "groups",
                                     "flat_groups", "cpu_s")}
            for row in rl.get("updates", []) if isinstance(row, dict)
        ]
    return picked


@scorer(metrics={"objective": [mean(), stderr()], "gap_closed": [mean(), stderr()],
                 "gap_to_best": [mean(), stderr()]})
def verified_objective(problem: str, timeout: int = DEFAULT_TIMEOUT_S):  # type: ignore[no-untyped-def]
    """Run the final program in the sandbox and score the verified objective.

    Args:
        problem: Problem name.
        timeout: Wall-clock limit of the run, in seconds.
    """
    spec = get_problem(problem)

    async def score(state: TaskState, target: Target) -> Score:
        program = final_program(state.output.completion)
        result = await evaluate(problem, program, timeout)
        valid = bool(result["valid"])
        objective = result["objective"] if valid else None
        value = float(objective) if objective is not None else spec.trivial
        start = await initial_objective(problem, timeout)
        gap_closed = (value - start) / (spec.best_known - start)
        metadata: dict[str, object] = {
            "valid": valid,
            "objective": objective,
            "direction": spec.direction,
            "best_known": spec.best_known,
            "alphaevolve": spec.alphaevolve,
            "gap_to_best_known": abs(spec.best_known - value),
            "initial_objective": start,
        }
        search = search_metadata(state.store.get(SEARCH_SUMMARY_KEY))
        if search is not None:
            metadata["search"] = search
        return Score(
            value={"objective": value, "gap_closed": gap_closed,
                   "gap_to_best": abs(spec.best_known - value)},
            answer=f"{value:.8f}",
            explanation=result["reason"],
            metadata=metadata,
        )

    return score
