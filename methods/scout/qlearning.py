"""Tabular Q-learning scouts: cheap explorers that learn one game instance fast.

SCOUT's premise (Harry-mic/SCOUT) is that exploration is what is expensive for an LLM, so
a tiny learner does the trial and error and hands over only its expert trajectories.
Here the scout is a Q-table over the instance's (hashable) states: epsilon-greedy
episodes, one-step Q-learning updates, optional potential-based shaping with the game's
distance estimate (``F = gamma * phi(s') - phi(s)`` with ``phi = -potential``, which keeps
the optimal policy, Ng et al. 1999), and a greedy rollout at the end. Every environment
step is counted (``transitions``) and the CPU time measured, so the exploration cost
can be set against the LLM's.

An illegal move costs ``illegal_penalty`` and leaves the state unchanged, so the scout
learns the rules too; a terminal failure (a hole) is a dead end with value 0.
"""

from __future__ import annotations

import time
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from methods.scout.protocol import GameLike

__all__ = ["QConfig", "ScoutRun", "Trajectory", "greedy_rollout", "train_scout"]


@dataclass(frozen=True)
class QConfig:
    """A scout's learning budget and constants."""

    episodes: int = 800
    max_steps: int = 40
    alpha: float = 0.5
    gamma: float = 0.95
    epsilon_start: float = 0.5
    epsilon_end: float = 0.05
    step_cost: float = 0.01
    illegal_penalty: float = 0.1
    shaping: bool = True
    stop_after_greedy_solves: int = 3
    """Stop early once the greedy policy has solved the instance on this many consecutive
    checks (checked every 10 episodes); 0 never stops early."""

    def __post_init__(self) -> None:
        if self.episodes < 1 or self.max_steps < 1:
            raise ValueError("episodes and max_steps must be at least 1")
        if not (0 < self.alpha <= 1 and 0 < self.gamma <= 1):
            raise ValueError("alpha and gamma must be in (0, 1]")


@dataclass(frozen=True)
class Trajectory:
    """A played episode: ``states[t]`` then ``actions[t]`` gave ``outcomes[t]`` and
    ``states[t + 1]``."""

    states: list[Any]
    actions: list[str]
    outcomes: list[str]
    solved: bool


@dataclass
class ScoutRun:
    """What one scout learned and what it cost."""

    q: dict[Hashable, np.ndarray] = field(repr=False)
    transitions: int
    episodes: int
    cpu_s: float
    trajectory: Trajectory


def _values(q: dict[Hashable, np.ndarray], state: Hashable, n: int) -> np.ndarray:
    row = q.get(state)
    if row is None:
        row = np.zeros(n)
        q[state] = row
    return row


def greedy_rollout(game: GameLike, q: dict[Hashable, np.ndarray], max_steps: int,
                   ) -> Trajectory:
    """Play the greedy policy of ``q`` (ties to the first action; unseen states take the
    first action), stopping at the end of the episode or after ``max_steps``; a state seen
    twice ends the rollout unsolved (a deterministic greedy loop never leaves)."""
    state: Any = game.initial()
    states, actions, outcomes = [state], [], []
    seen = {state}
    n = len(game.actions)
    for _ in range(max_steps):
        if game.solved(state):
            break
        row = q.get(state, np.zeros(n))
        action = game.actions[int(np.argmax(row))]
        result = game.step(state, action)
        actions.append(action)
        outcomes.append(result.outcome)
        state = result.state
        states.append(state)
        if result.done or state in seen:
            break
        seen.add(state)
    return Trajectory(states, actions, outcomes, bool(game.solved(state)))


def train_scout(game: GameLike, cfg: QConfig, seed: int) -> ScoutRun:
    """Learn ``game`` with epsilon-greedy Q-learning (same seed, same table), then roll the
    greedy policy out."""
    rng = np.random.default_rng(seed)
    q: dict[Hashable, np.ndarray] = {}
    n = len(game.actions)
    transitions = 0
    streak = 0
    start = time.process_time()
    episode = 0
    for episode in range(1, cfg.episodes + 1):
        frac = (episode - 1) / max(cfg.episodes - 1, 1)
        eps = cfg.epsilon_start + (cfg.epsilon_end - cfg.epsilon_start) * frac
        state: Any = game.initial()
        for _ in range(cfg.max_steps):
            row = _values(q, state, n)
            if rng.random() < eps:
                a = int(rng.integers(n))
            else:
                best = np.flatnonzero(row == row.max())
                a = int(best[rng.integers(len(best))])
            result = game.step(state, game.actions[a])
            transitions += 1
            reward = float(result.reward) - cfg.step_cost
            if not result.legal:
                reward -= cfg.illegal_penalty
            if cfg.shaping:
                # phi = -potential; a terminal state's potential counts as 0 only at a goal
                reward += cfg.gamma * -game.potential(result.state) + game.potential(state)
            if result.done:
                target = reward
            else:
                target = reward + cfg.gamma * float(_values(q, result.state, n).max())
            row[a] += cfg.alpha * (target - row[a])
            state = result.state
            if result.done:
                break
        if cfg.stop_after_greedy_solves and episode % 10 == 0:
            check = greedy_rollout(game, q, cfg.max_steps)
            transitions += len(check.actions)  # a check steps the game too: it counts
            streak = streak + 1 if check.solved else 0
            if streak >= cfg.stop_after_greedy_solves:
                break
    final = greedy_rollout(game, q, cfg.max_steps)
    transitions += len(final.actions)
    cpu = time.process_time() - start
    return ScoutRun(q, transitions, episode, cpu, final)
