"""The 8-puzzle with exact distances, scramble trajectories and a budgeted weighted A* (the
Rubik HMM paper's heuristic-learning setting at a size where every distance is known).
No Inspect imports."""

from environments.rubik_hmm.puzzle import (
    GOAL,
    Puzzle,
    local_ranking_accuracy,
    puzzle,
    scramble,
    weighted_astar,
)

__all__ = ["GOAL", "Puzzle", "local_ranking_accuracy", "puzzle", "scramble", "weighted_astar"]
