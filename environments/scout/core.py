"""What the three SCOUT games share: the step result, the game interface, breadth-first
search and the exact verifier of a move list.

Why one interface: a scout (tabular Q-learning) and a language model play the same
object, so the scout's transitions and the model's transitions are counted the same way,
and one verifier scores both. States are immutable and hashable (tuples), so ``step`` is a
pure function: a scout can branch, BFS can enumerate, and a replay from the instance's
spec always lands on the same state.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Game", "Step", "Verdict", "shortest_path", "verify"]

State = Hashable


@dataclass(frozen=True)
class Step:
    """One transition. ``legal`` is False for a move the rules forbid (off the grid, into
    a wall, a push against a box or wall, an unknown action, any move after the episode
    ended): the state is then unchanged. ``outcome`` is the text the player is told."""

    state: Any
    reward: float
    done: bool
    legal: bool
    outcome: str


@dataclass(frozen=True)
class Verdict:
    """The verifier's account of a move list (see :func:`verify`)."""

    solved: bool
    moves: int
    illegal: int
    first_illegal: int | None
    failed: bool
    """The episode ended without the goal (FrozenLake: fell into a hole)."""
    solved_at: int | None
    """Number of moves (legal or not) made when the goal was reached."""


class Game(ABC):
    """One instance of a game: its rules, its start state and its dynamics.

    Subclasses set ``name`` (the family), ``actions`` and ``rules`` (one paragraph for a
    prompt) and implement the abstract methods; :meth:`spec` returns the JSON-able record
    that :func:`environments.scout.make_game` turns back into the same instance.
    """

    name: str = ""
    actions: tuple[str, ...] = ("up", "down", "left", "right")
    rules: str = ""

    @abstractmethod
    def initial(self) -> Any:
        """The start state."""

    @abstractmethod
    def _move(self, state: Any, action: str) -> Step:
        """The transition for a known action from a non-terminal state."""

    @abstractmethod
    def solved(self, state: Any) -> bool:
        """Whether ``state`` is a goal state."""

    @abstractmethod
    def render(self, state: Any) -> str:
        """The state as text (a grid and one line of facts)."""

    @abstractmethod
    def spec(self) -> dict[str, Any]:
        """The instance as a JSON-able record (``{"game": name, ...}``)."""

    def terminal(self, state: Any) -> bool:
        """Whether the episode is over in ``state`` (solved, or lost)."""
        return self.solved(state)

    def potential(self, state: Any) -> float:
        """A distance-to-goal estimate (0 at a goal), for potential-based reward shaping,
        which leaves the optimal policy unchanged (Ng et al. 1999)."""
        return 0.0

    def step(self, state: Any, action: str) -> Step:
        """Apply ``action``; an unknown action or a move after the end is illegal."""
        if self.terminal(state):
            return Step(state, 0.0, True, False, "illegal move: the episode is over")
        if action not in self.actions:
            return Step(state, 0.0, False, False,
                        f"illegal move: unknown direction {action!r} "
                        f"(use one of {', '.join(self.actions)})")
        return self._move(state, action)

    def observe(self, state: Any, outcome: str) -> str:
        """What the player reads after a step: the outcome line, then the board."""
        return f"{outcome}\n{self.render(state)}"


def shortest_path(game: Game, max_states: int = 500_000) -> list[str] | None:
    """The shortest legal move list from the start to a goal (BFS), or None if none exists
    within ``max_states`` visited states. Terminal non-goal states are dead ends."""
    start = game.initial()
    if game.solved(start):
        return []
    parent: dict[Any, tuple[Any, str] | None] = {start: None}
    queue: deque[Any] = deque([start])
    while queue:
        state = queue.popleft()
        for action in game.actions:
            result = game.step(state, action)
            if not result.legal or result.state in parent:
                continue
            parent[result.state] = (state, action)
            if game.solved(result.state):
                path: list[str] = []
                node: Any = result.state
                while parent[node] is not None:
                    prev, act = parent[node]  # type: ignore[misc]
                    path.append(act)
                    node = prev
                return path[::-1]
            if len(parent) >= max_states:
                return None
            if not result.done:
                queue.append(result.state)
    return None


def verify(game: Game, moves: Sequence[str], strict: bool = False) -> Verdict:
    """Replay ``moves`` from the start with the game's own rules.

    An illegal move leaves the state unchanged and is counted; with ``strict`` the first
    illegal move ends the replay unsolved. Moves after the goal are illegal (the episode
    is over) but the goal stays reached.
    """
    state = game.initial()
    illegal, first_illegal, solved_at, failed = 0, None, None, False
    if game.solved(state):
        solved_at = 0
    for i, action in enumerate(moves):
        result = game.step(state, str(action))
        if not result.legal:
            illegal += 1
            first_illegal = i if first_illegal is None else first_illegal
            if strict and solved_at is None:
                return Verdict(False, len(moves), illegal, first_illegal, failed, None)
            continue
        state = result.state
        if game.solved(state) and solved_at is None:
            solved_at = i + 1
        elif result.done and not game.solved(state):
            failed = True
    return Verdict(solved_at is not None, len(moves), illegal, first_illegal, failed,
                   solved_at)
