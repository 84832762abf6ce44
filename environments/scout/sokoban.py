"""Sokoban: push every box onto a target; boxes can be pushed, never pulled.

Rooms are small (an ``h x w`` floor inside a wall, a few inner walls, one or two boxes)
and solvable by construction: boxes start on their targets and the generator plays
*backwards* (the player walks, or pulls a box it stands next to), as in Gym-Sokoban's
reverse-play generation; every backward pull is a forward push, so the reversed play is
a solution. BFS then gives the optimal length, and rooms whose optimum is under
``min_moves`` are redrawn. A move into a wall, or a push against a wall or another box,
is illegal (the state is unchanged).

Text (the standard XSB letters, ``_`` for floor): ``#`` wall, ``@`` player, ``+`` player
on a target, ``$`` box, ``*`` box on a target, ``.`` target.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from environments.scout.core import Game, Step, shortest_path

__all__ = ["Sokoban", "generate_sokoban"]

DELTAS = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}
MAX_DRAWS = 2_000

Pos = tuple[int, int]


class Sokoban(Game):
    """One room. The state is ``(player, boxes)`` with ``boxes`` a sorted tuple."""

    name = "sokoban"
    rules = ("Sokoban. You are @. Push every box $ onto a target . (a box on a target is *). "
             "Walls # block you. You can push a box by walking into it, but never pull it. "
             "Moves: up, down, left, right.")

    def __init__(self, walls: list[str], player: Pos, boxes: list[Pos],
                 targets: list[Pos]) -> None:
        self.walls_rows = [str(r) for r in walls]
        self.h, self.w = len(walls), len(walls[0]) if walls else 0
        if not self.h or any(len(r) != self.w for r in walls):
            raise ValueError("the wall map is a non-empty list of equal-length rows")
        self.walls = {(i, j) for i, r in enumerate(walls) for j, ch in enumerate(r) if ch == "#"}
        self.player = (int(player[0]), int(player[1]))
        self.boxes = tuple(sorted((int(b[0]), int(b[1])) for b in boxes))
        self.targets = frozenset((int(t[0]), int(t[1])) for t in targets)
        if len(self.boxes) != len(self.targets) or not self.boxes:
            raise ValueError("a room needs as many targets as boxes, and at least one box")
        cells = [self.player, *self.boxes, *self.targets]
        if any(c in self.walls or not self._inside(c) for c in cells):
            raise ValueError("player, boxes and targets must be on the floor")
        if self.player in self.boxes or len(set(self.boxes)) != len(self.boxes):
            raise ValueError("player and boxes must be on distinct cells")

    def _inside(self, pos: Pos) -> bool:
        return 0 <= pos[0] < self.h and 0 <= pos[1] < self.w

    def _free(self, pos: Pos, boxes: tuple[Pos, ...]) -> bool:
        return self._inside(pos) and pos not in self.walls and pos not in boxes

    def initial(self) -> tuple[Pos, tuple[Pos, ...]]:
        return (self.player, self.boxes)

    def solved(self, state: Any) -> bool:
        return set(state[1]) == self.targets

    def potential(self, state: Any) -> float:
        """Sum over boxes of the Manhattan distance to the nearest target."""
        return float(sum(min(abs(b[0] - t[0]) + abs(b[1] - t[1]) for t in self.targets)
                         for b in state[1]))

    def _move(self, state: Any, action: str) -> Step:
        player, boxes = state
        dr, dc = DELTAS[action]
        nxt = (player[0] + dr, player[1] + dc)
        if not self._inside(nxt) or nxt in self.walls:
            return Step(state, 0.0, False, False, "illegal move: a wall is in the way")
        if nxt in boxes:
            beyond = (nxt[0] + dr, nxt[1] + dc)
            if not self._free(beyond, boxes):
                return Step(state, 0.0, False, False,
                            "illegal move: the box is blocked and cannot be pushed")
            moved = tuple(sorted(beyond if b == nxt else b for b in boxes))
            new = (nxt, moved)
            if self.solved(new):
                return Step(new, 1.0, True, True, f"pushed {action}: every box is on a "
                            "target, solved")
            return Step(new, 0.0, False, True, f"pushed {action}")
        return Step((nxt, boxes), 0.0, False, True, f"moved {action}")

    def render(self, state: Any) -> str:
        player, boxes = state
        lines = []
        for i in range(self.h):
            row = []
            for j in range(self.w):
                pos = (i, j)
                if pos in self.walls:
                    row.append("#")
                elif pos == player:
                    row.append("+" if pos in self.targets else "@")
                elif pos in boxes:
                    row.append("*" if pos in self.targets else "$")
                elif pos in self.targets:
                    row.append(".")
                else:
                    row.append("_")
            lines.append("".join(row))
        done = sum(b in self.targets for b in boxes)
        return "\n".join(lines) + (f"\n@ is at row {player[0]}, column {player[1]}; "
                                   f"{done} of {len(boxes)} boxes on targets.")

    def spec(self) -> dict[str, Any]:
        return {"game": self.name, "walls": list(self.walls_rows), "player": list(self.player),
                "boxes": [list(b) for b in self.boxes],
                "targets": [list(t) for t in sorted(self.targets)]}


def _room(rng: np.random.Generator, h: int, w: int, inner_walls: int) -> list[str]:
    grid = [["#"] * (w + 2) for _ in range(h + 2)]
    for i in range(1, h + 1):
        for j in range(1, w + 1):
            grid[i][j] = "_"
    floor = [(i, j) for i in range(1, h + 1) for j in range(1, w + 1)]
    for k in rng.permutation(len(floor))[:inner_walls]:
        i, j = floor[int(k)]
        grid[i][j] = "#"
    return ["".join(r) for r in grid]


def _reverse_play(rng: np.random.Generator, room: Sokoban, steps: int) -> Sokoban | None:
    """Walk backwards from the solved room; a pull moves the box the player leaves."""
    player, boxes = room.player, list(room.boxes)
    names = list(DELTAS)
    for _ in range(steps):
        dr, dc = DELTAS[names[int(rng.integers(4))]]
        nxt = (player[0] + dr, player[1] + dc)
        if not room._free(nxt, tuple(boxes)):
            continue
        behind = (player[0] - dr, player[1] - dc)
        if behind in boxes and rng.random() < 0.6:
            boxes[boxes.index(behind)] = player
        player = nxt
    if set(boxes) == room.targets:
        return None
    return Sokoban(room.walls_rows, player, boxes, sorted(room.targets))


def generate_sokoban(seed: int, height: int = 4, width: int = 4, boxes: int = 1,
                     inner_walls: int = 1, min_moves: int = 3, reverse_steps: int = 40,
                     ) -> Sokoban:
    """A solvable room whose optimal solution has at least ``min_moves`` moves (same seed,
    same room)."""
    if height < 2 or width < 2 or boxes < 1:
        raise ValueError("a room needs a floor of at least 2 x 2 and at least one box")
    if boxes + 1 + inner_walls > height * width - 2:
        raise ValueError("too many boxes and walls for the floor")
    rng = np.random.default_rng(seed)
    for _ in range(MAX_DRAWS):
        walls = _room(rng, height, width, inner_walls)
        floor = [(i, j) for i, r in enumerate(walls) for j, ch in enumerate(r) if ch == "_"]
        picks = [floor[int(k)] for k in rng.permutation(len(floor))[:boxes + 1]]
        solved = Sokoban(walls, picks[0], picks[1:], picks[1:])
        puzzle = _reverse_play(rng, solved, reverse_steps)
        if puzzle is None:
            continue
        path = shortest_path(puzzle)
        if path is not None and len(path) >= min_moves:
            return puzzle
    raise ValueError(f"no room with a solution of >= {min_moves} moves in {MAX_DRAWS} draws")
