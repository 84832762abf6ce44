"""Symbolic and spatial games for SCOUT (Sub-Scale Collaboration On Unseen Tasks): seeded
generators, step functions with a text rendering, and exact verifiers. No Inspect here.

Three families, each solvable by construction and checked by BFS:

* ``frozenlake``: an ``n x n`` lake with holes, a path guaranteed;
* ``sokoban``: a small walled room, one or two boxes, built by reverse play;
* ``sliding``: the 3 x 3 sliding puzzle, a random-walk scramble (even parity).

    from environments.scout import generate, make_game, shortest_path, verify
    game = generate("sokoban", seed=3)
    print(game.render(game.initial()))
    assert verify(game, shortest_path(game)).solved
    same = make_game(game.spec())     # an instance travels as its JSON-able spec
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from environments.scout.core import Game, Step, Verdict, shortest_path, verify
from environments.scout.frozenlake import FrozenLake, generate_frozenlake
from environments.scout.sliding import SlidingPuzzle, generate_sliding, solvable
from environments.scout.sokoban import Sokoban, generate_sokoban

__all__ = [
    "GAMES",
    "FrozenLake",
    "Game",
    "SlidingPuzzle",
    "Sokoban",
    "Step",
    "Verdict",
    "generate",
    "make_game",
    "shortest_path",
    "solvable",
    "verify",
]

GAMES: dict[str, Callable[..., Game]] = {
    "frozenlake": generate_frozenlake,
    "sokoban": generate_sokoban,
    "sliding": generate_sliding,
}
"""Family name -> seeded generator ``fn(seed, **options) -> Game``."""


def generate(game: str, seed: int, **options: Any) -> Game:
    """A seeded instance of family ``game`` (same seed and options, same instance)."""
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}: one of {', '.join(GAMES)}")
    return GAMES[game](seed, **options)


def _pos(value: Any) -> tuple[int, int]:
    return (int(value[0]), int(value[1]))


def make_game(spec: dict[str, Any]) -> Game:
    """The instance a :meth:`Game.spec` record describes (what a task stores per sample)."""
    kind = spec.get("game")
    if kind == "frozenlake":
        return FrozenLake(list(spec["rows"]))
    if kind == "sokoban":
        return Sokoban(list(spec["walls"]), _pos(spec["player"]),
                       [_pos(b) for b in spec["boxes"]], [_pos(t) for t in spec["targets"]])
    if kind == "sliding":
        return SlidingPuzzle(list(spec["tiles"]))
    raise ValueError(f"unknown game spec {spec!r}: 'game' must be one of {', '.join(GAMES)}")
