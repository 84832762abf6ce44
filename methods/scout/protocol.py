"""The interface a scout needs from a game, as a structural type.

Why a Protocol: ``methods/`` imports no environment (an import-linter contract), so the
scouts and the textualiser are written against this shape and get their games from a
task (whose metadata names the simulator, see :mod:`methods.scout.recipe`). Any object
with these members works: the suite's ``environments.scout`` games, or a Gymnasium
wrapper with hashable states.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Protocol

__all__ = ["GameLike", "StepLike"]


class StepLike(Protocol):
    """One transition: next state, reward, episode over, rule-abiding, outcome text."""

    state: Any
    reward: float
    done: bool
    legal: bool
    outcome: str


class GameLike(Protocol):
    """A deterministic game with hashable states and a text rendering."""

    name: str
    actions: tuple[str, ...]

    def initial(self) -> Hashable:
        """The start state."""
        ...

    def step(self, state: Any, action: str) -> StepLike:
        """The transition (illegal moves leave the state unchanged)."""
        ...

    def solved(self, state: Any) -> bool:
        """Whether ``state`` is a goal."""
        ...

    def potential(self, state: Any) -> float:
        """A distance-to-goal estimate, 0 at the goal (for reward shaping)."""
        ...

    def observe(self, state: Any, outcome: str) -> str:
        """What a player reads after a step (the outcome line and the board)."""
        ...
