"""The 3 x 3 sliding puzzle (8-puzzle): slide the blank until the tiles read 1..8.

A move names the direction the blank (``_``) travels, swapping with the tile there; a
move off the board is illegal. Half of all tile orders cannot be solved: an order is
solvable exactly when its number of inversions (tile pairs out of order, blank ignored)
is even, on an odd-width board. Instances are scrambled from the goal by a random walk of
the blank (so they are solvable by construction, and the parity test holds); ``depth``
sets the difficulty, and BFS gives the optimal length, redrawn if under ``min_moves``.
``depth=None`` draws a uniformly random solvable order instead (up to 31 moves).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from environments.scout.core import Game, Step, shortest_path

__all__ = ["GOAL", "SlidingPuzzle", "generate_sliding", "inversions", "solvable"]

SIDE = 3
GOAL: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 8, 0)
DELTAS = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}
MAX_DRAWS = 2_000


def inversions(tiles: tuple[int, ...] | list[int]) -> int:
    """Pairs of tiles (blank = 0 ignored) that appear in the wrong order."""
    seq = [t for t in tiles if t]
    return sum(1 for i in range(len(seq)) for j in range(i + 1, len(seq)) if seq[i] > seq[j])


def solvable(tiles: tuple[int, ...] | list[int]) -> bool:
    """Whether a 3 x 3 order can reach :data:`GOAL` (an even number of inversions)."""
    return sorted(tiles) == list(range(SIDE * SIDE)) and inversions(tiles) % 2 == 0


class SlidingPuzzle(Game):
    """One scramble; the state is the 9 tiles row by row (0 is the blank)."""

    name = "sliding"
    rules = ("Sliding puzzle. Slide the blank _ to put the tiles in order 1 2 3 / 4 5 6 / "
             "7 8 _. Each move sends the blank up, down, left or right, swapping it with the "
             "tile there. Moving the blank off the board is illegal.")

    def __init__(self, tiles: list[int] | tuple[int, ...]) -> None:
        tiles = tuple(int(t) for t in tiles)
        if sorted(tiles) != list(range(SIDE * SIDE)):
            raise ValueError(f"tiles must be a permutation of 0..8, got {tiles}")
        if not solvable(tiles):
            raise ValueError(f"tiles {tiles} have odd inversion parity: not solvable")
        self.tiles = tiles

    def initial(self) -> tuple[int, ...]:
        return self.tiles

    def solved(self, state: Any) -> bool:
        return tuple(state) == GOAL

    def potential(self, state: Any) -> float:
        """Sum of the tiles' Manhattan distances to their goal cells."""
        total = 0
        for k, t in enumerate(state):
            if t:
                g = t - 1
                total += abs(k // SIDE - g // SIDE) + abs(k % SIDE - g % SIDE)
        return float(total)

    def _move(self, state: Any, action: str) -> Step:
        k = state.index(0)
        r, c = divmod(k, SIDE)
        dr, dc = DELTAS[action]
        nr, nc = r + dr, c + dc
        if not (0 <= nr < SIDE and 0 <= nc < SIDE):
            return Step(state, 0.0, False, False, "illegal move: the blank is at the edge")
        tiles = list(state)
        j = nr * SIDE + nc
        tiles[k], tiles[j] = tiles[j], 0
        new = tuple(tiles)
        if new == GOAL:
            return Step(new, 1.0, True, True, f"moved {action}: tiles in order, solved")
        return Step(new, 0.0, False, True, f"moved {action}")

    def render(self, state: Any) -> str:
        rows = [" ".join(str(t) if t else "_" for t in state[i * SIDE:(i + 1) * SIDE])
                for i in range(SIDE)]
        r, c = divmod(state.index(0), SIDE)
        return "\n".join(rows) + f"\nThe blank is at row {r}, column {c}."

    def spec(self) -> dict[str, Any]:
        return {"game": self.name, "tiles": list(self.tiles)}


def generate_sliding(seed: int, depth: int | None = 8, min_moves: int = 4) -> SlidingPuzzle:
    """A solvable scramble (same seed, same tiles): a ``depth``-move random walk of the
    blank from the goal (never straight back), kept if its optimum is >= ``min_moves``;
    ``depth=None``: a uniformly random order with even parity."""
    rng = np.random.default_rng(seed)
    names = list(DELTAS)
    back = {"up": "down", "down": "up", "left": "right", "right": "left"}
    for _ in range(MAX_DRAWS):
        if depth is None:
            tiles = tuple(int(t) for t in rng.permutation(SIDE * SIDE))
            if not solvable(tiles) or tiles == GOAL:
                continue
            return SlidingPuzzle(tiles)
        state, last = GOAL, ""
        for _ in range(depth):
            options = [a for a in names if a != back.get(last)]
            moves = [(a, _walk(state, a)) for a in options]
            legal = [(a, s) for a, s in moves if s is not None]
            last, state = legal[int(rng.integers(len(legal)))]
        puzzle = SlidingPuzzle(state)
        path = shortest_path(puzzle)
        if path is not None and len(path) >= min_moves:
            return puzzle
    raise ValueError(f"no scramble with an optimum >= {min_moves} in {MAX_DRAWS} draws")


def _walk(state: tuple[int, ...], action: str) -> tuple[int, ...] | None:
    k = state.index(0)
    r, c = divmod(k, SIDE)
    dr, dc = DELTAS[action]
    if not (0 <= r + dr < SIDE and 0 <= c + dc < SIDE):
        return None
    tiles = list(state)
    j = (r + dr) * SIDE + c + dc
    tiles[k], tiles[j] = tiles[j], 0
    return tuple(tiles)

