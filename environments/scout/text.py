"""Read a rendered board back into a game whose start is the board's state.

Why: a reference agent that sees only what a model sees (the rules and the latest board)
can then plan with BFS, which proves every instance solvable through the task's own
text and tool; and rendering, then parsing, then rendering again is a test of the text.
"""

from __future__ import annotations

from environments.scout.core import Game
from environments.scout.frozenlake import FrozenLake
from environments.scout.sliding import SlidingPuzzle
from environments.scout.sokoban import Sokoban

__all__ = ["game_of_rules", "parse_board"]

_TITLES = {"FrozenLake.": "frozenlake", "Sokoban.": "sokoban", "Sliding puzzle.": "sliding"}


def game_of_rules(text: str) -> str | None:
    """The family whose rules paragraph ``text`` contains (by its title), or None."""
    for title, name in _TITLES.items():
        if title in text:
            return name
    return None


def _grid(text: str, alphabet: str) -> list[str]:
    rows = [line for line in text.splitlines() if line and set(line) <= set(alphabet)]
    if not rows:
        raise ValueError(f"no board made of {alphabet!r} in {text!r}")
    return rows


def parse_board(game: str, text: str) -> Game:
    """The instance of family ``game`` whose start is the board in ``text`` (an outcome
    line, the grid and a facts line, as :meth:`Game.observe` writes them)."""
    if game == "frozenlake":
        rows = _grid(text, ".HGP")
        if not any("P" in r for r in rows):
            raise ValueError("no player P on the lake")
        if not any("G" in r for r in rows):
            raise ValueError("the player is on the goal: nothing to plan")
        return FrozenLake([r.replace(".", "F").replace("P", "S") for r in rows])
    if game == "sokoban":
        rows = _grid(text, "#_@+$*.")
        walls = ["".join("#" if ch == "#" else "_" for ch in r) for r in rows]
        cells = [((i, j), ch) for i, r in enumerate(rows) for j, ch in enumerate(r)]
        player = [p for p, ch in cells if ch in "@+"]
        if len(player) != 1:
            raise ValueError("a Sokoban board has exactly one player (@ or +)")
        return Sokoban(walls, player[0], [p for p, ch in cells if ch in "$*"],
                       [p for p, ch in cells if ch in ".*+"])
    if game == "sliding":
        split = [line.split() for line in text.splitlines()]
        grid = [r for r in split if len(r) == 3 and all(t == "_" or t.isdigit() for t in r)]
        if len(grid) != 3:
            raise ValueError(f"no 3 x 3 board in {text!r}")
        return SlidingPuzzle([0 if t == "_" else int(t) for r in grid for t in r])
    raise ValueError(f"unknown game {game!r}")
