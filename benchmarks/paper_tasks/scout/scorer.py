"""The verifier-based scorer: replay the sample's recorded moves with the game's own rules.

Nothing the model wrote is trusted: the store's move list (kept by the ``move`` tool) is
replayed from the instance's spec by :func:`environments.scout.verify`. Score keys:

* ``solved``: 1 if the goal was reached within the move limit;
* ``efficiency``: optimal length / moves used to reach the goal (0 unsolved), 1 is optimal;
* ``moves``: moves made (the model's environment transitions, its exploration cost);
* ``illegal``: moves the rules forbid (state unchanged); ``invalid_calls``: turns with
  no usable ``move`` call (no call, or one that does not parse);
* ``model_s``: wall seconds spent waiting on the model in this sample.
"""

from __future__ import annotations

from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState

from benchmarks.paper_tasks.scout.tools import INVALID_KEY, MOVES_KEY
from environments.scout import make_game, verify

__all__ = ["MODEL_S_KEY", "scout_score"]

MODEL_S_KEY = "scout_model_s"


@scorer(metrics={"*": [mean(), stderr()]})
def scout_score() -> Scorer:
    """Solved, efficiency, moves, illegal moves and invalid calls from the replayed moves."""

    async def score(state: TaskState, target: Target) -> Score:
        game = make_game(state.metadata["spec"])
        recorded: list[str] = state.store.get(MOVES_KEY, [])
        moves = [str(m) for m in recorded]
        verdict = verify(game, moves)
        optimal = int(state.metadata["optimal"])
        efficiency = optimal / verdict.solved_at if verdict.solved and verdict.solved_at else 0.0
        if verdict.solved and verdict.solved_at == 0:
            efficiency = 1.0
        return Score(
            value={
                "solved": float(verdict.solved),
                "efficiency": float(efficiency),
                "moves": float(len(moves)),
                "illegal": float(verdict.illegal),
                "invalid_calls": float(state.store.get(INVALID_KEY, 0)),
                "model_s": float(state.store.get(MODEL_S_KEY, 0.0)),
            },
            answer=" ".join(moves),
            explanation=(f"{'solved' if verdict.solved else 'not solved'} in {len(moves)} "
                         f"moves ({verdict.illegal} illegal); optimal {optimal}"
                         + ("; fell into a hole" if verdict.failed else "")),
        )

    return score
