"""FrozenLake: walk from the top-left corner to the goal in the bottom-right corner of an
``n x n`` lake without stepping into a hole.

Deterministic (not slippery) moves, as in Gymnasium's ``FrozenLake-v1`` with
``is_slippery=False``; maps are drawn like Gymnasium's ``generate_random_map``: each cell
frozen with probability ``1 - p_hole``, redrawn until a path exists (checked here by BFS
over the grid), so every instance is solvable. Walking off the lake is an illegal move
(the state is unchanged); a hole ends the episode unsolved.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from environments.scout.core import Game, Step

__all__ = ["FrozenLake", "generate_frozenlake"]

DELTAS = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}
MAX_DRAWS = 10_000


class FrozenLake(Game):
    """One lake: ``rows`` are strings of ``F`` (frozen), ``H`` (hole), ``S``, ``G``.

    The state is the player's ``(row, col)``.
    """

    name = "frozenlake"
    rules = ("FrozenLake. You are P on a frozen lake. Reach the goal G without stepping "
             "into a hole H. Moves: up, down, left, right. Walking off the lake is illegal.")

    def __init__(self, rows: list[str]) -> None:
        if not rows or any(len(r) != len(rows) for r in rows):
            raise ValueError("a FrozenLake map is a square list of equal-length rows")
        if set("".join(rows)) - set("SFHG"):
            raise ValueError(f"unknown map characters in {rows!r} (use S F H G)")
        self.rows = [str(r) for r in rows]
        self.n = len(rows)
        starts = [(i, r.index("S")) for i, r in enumerate(rows) if "S" in r]
        goals = [(i, r.index("G")) for i, r in enumerate(rows) if "G" in r]
        if len(starts) != 1 or len(goals) != 1:
            raise ValueError("a FrozenLake map has exactly one S and one G")
        self.start, self.goal = starts[0], goals[0]

    def initial(self) -> tuple[int, int]:
        return self.start

    def cell(self, pos: tuple[int, int]) -> str:
        """The map character at ``pos``."""
        return self.rows[pos[0]][pos[1]]

    def solved(self, state: Any) -> bool:
        return bool(state == self.goal)

    def terminal(self, state: Any) -> bool:
        return self.solved(state) or self.cell(state) == "H"

    def potential(self, state: Any) -> float:
        return float(abs(state[0] - self.goal[0]) + abs(state[1] - self.goal[1]))

    def _move(self, state: Any, action: str) -> Step:
        dr, dc = DELTAS[action]
        r, c = state[0] + dr, state[1] + dc
        if not (0 <= r < self.n and 0 <= c < self.n):
            return Step(state, 0.0, False, False, "illegal move: that is off the lake")
        new = (r, c)
        if self.cell(new) == "H":
            return Step(new, 0.0, True, True, f"moved {action}: fell into a hole, game over")
        if new == self.goal:
            return Step(new, 1.0, True, True, f"moved {action}: reached the goal, solved")
        return Step(new, 0.0, False, True, f"moved {action}")

    def render(self, state: Any) -> str:
        lines = []
        for i, row in enumerate(self.rows):
            chars = ["." if ch in "FS" else ch for ch in row]
            if i == state[0]:
                chars[state[1]] = "P"
            lines.append("".join(chars))
        return "\n".join(lines) + f"\nP is at row {state[0]}, column {state[1]}."

    def spec(self) -> dict[str, Any]:
        return {"game": self.name, "rows": list(self.rows)}


def _has_path(grid: np.ndarray) -> bool:
    n = grid.shape[0]
    seen = {(0, 0)}
    queue = deque([(0, 0)])
    while queue:
        r, c = queue.popleft()
        if (r, c) == (n - 1, n - 1):
            return True
        for dr, dc in DELTAS.values():
            nr, nc = r + dr, c + dc
            if 0 <= nr < n and 0 <= nc < n and not grid[nr, nc] and (nr, nc) not in seen:
                seen.add((nr, nc))
                queue.append((nr, nc))
    return False


def generate_frozenlake(seed: int, size: int = 4, p_hole: float = 0.2) -> FrozenLake:
    """A random ``size x size`` lake with a guaranteed path from S to G (same seed, same
    map)."""
    if size < 2:
        raise ValueError(f"size must be at least 2, got {size}")
    if not 0.0 <= p_hole < 1.0:
        raise ValueError(f"p_hole must be in [0, 1), got {p_hole}")
    rng = np.random.default_rng(seed)
    for _ in range(MAX_DRAWS):
        holes = rng.random((size, size)) < p_hole
        holes[0, 0] = holes[-1, -1] = False
        if _has_path(holes):
            rows = ["".join("H" if h else "F" for h in row) for row in holes]
            rows[0] = "S" + rows[0][1:]
            rows[-1] = rows[-1][:-1] + "G"
            return FrozenLake(rows)
    raise ValueError(f"no solvable {size}x{size} map in {MAX_DRAWS} draws at p_hole={p_hole}")
