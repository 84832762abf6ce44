"""A DQN scout: a 128-unit MLP Q-network, replay buffer and target network, in numpy.

SCOUT (Harry-mic/SCOUT) uses small neural scouts (MLPs trained by DQN or PPO) rather than
tables; this is that scout next to :mod:`methods.scout.qlearning`'s tabular one, on the
same games, rewards and budget accounting, so the two can be compared in solved share,
environment transitions and CPU time. The network sees the board, not the state id: the
grid lines of ``game.observe(state, "")`` one-hot encoded per cell over printable ASCII,
so any :class:`~methods.scout.protocol.GameLike` works without a per-game encoder.

Learning: epsilon-greedy episodes (epsilon linear in the episode index), every transition
pushed to a ring buffer, one Adam step on a Huber loss per environment step once the buffer
holds ``warmup`` transitions, targets from a frozen copy of the network synced every
``target_every`` updates. Rewards are the tabular scout's (step cost, illegal penalty,
potential-based shaping), so only the function approximator differs. Numpy, not torch:
the network is tiny and a numpy step has no framework overhead; all randomness comes
from one seeded generator, so the same seed gives the same run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from methods.scout.protocol import GameLike
from methods.scout.qlearning import Trajectory

__all__ = ["DQNConfig", "DQNRun", "board_features", "greedy_dqn_rollout", "train_dqn"]

_ALPHABET = {chr(c): i for i, c in enumerate(range(32, 127))}


def board_features(game: GameLike, state: Any) -> np.ndarray:
    """The grid of ``observe(state, "")`` (its non-empty lines but the last, a facts
    line) as a flat one-hot of cell x printable character; other characters map to none."""
    lines = [line for line in game.observe(state, "").splitlines() if line.strip()]
    grid = lines[:-1] if len(lines) > 1 else lines
    width = max(len(line) for line in grid)
    out = np.zeros((len(grid), width, len(_ALPHABET)), dtype=np.float32)
    for r, line in enumerate(grid):
        for c, ch in enumerate(line):
            k = _ALPHABET.get(ch)
            if k is not None:
                out[r, c, k] = 1.0
    return out.reshape(-1)


@dataclass(frozen=True)
class DQNConfig:
    """The DQN scout's budget and constants (rewards as :class:`QConfig`)."""

    episodes: int = 300
    max_steps: int = 40
    hidden: int = 128
    lr: float = 1e-3
    gamma: float = 0.95
    epsilon_start: float = 1.0
    epsilon_end: float = 0.05
    epsilon_episodes: int = 100
    """Episodes over which epsilon decays linearly, then stays at ``epsilon_end``."""
    buffer: int = 10_000
    batch: int = 32
    warmup: int = 64
    target_every: int = 100
    step_cost: float = 0.01
    illegal_penalty: float = 0.1
    shaping: bool = True
    stop_after_greedy_solves: int = 3
    """Stop once the greedy policy solved the instance on this many consecutive checks
    (every 10 episodes); 0 never stops early."""

    def __post_init__(self) -> None:
        if self.episodes < 1 or self.max_steps < 1 or self.hidden < 1:
            raise ValueError("episodes, max_steps and hidden must be at least 1")
        if self.batch < 1 or self.buffer < self.batch or self.warmup < self.batch:
            raise ValueError("need buffer >= batch, warmup >= batch >= 1")
        if not (0 < self.gamma <= 1 and self.lr > 0):
            raise ValueError("gamma must be in (0, 1] and lr positive")


class _MLP:
    """``relu(x W1 + b1) W2 + b2`` with Adam; parameters in a dict for cheap copies."""

    def __init__(self, d_in: int, hidden: int, d_out: int, rng: np.random.Generator,
                 lr: float) -> None:
        self.p = {"w1": rng.normal(0, np.sqrt(2 / d_in), (d_in, hidden)).astype(np.float32),
                  "b1": np.zeros(hidden, np.float32),
                  "w2": rng.normal(0, np.sqrt(1 / hidden), (hidden, d_out)).astype(np.float32),
                  "b2": np.zeros(d_out, np.float32)}
        self.m = {k: np.zeros_like(v) for k, v in self.p.items()}
        self.v = {k: np.zeros_like(v) for k, v in self.p.items()}
        self.t = 0
        self.lr = lr

    def forward(self, x: np.ndarray, p: dict[str, np.ndarray] | None = None) -> np.ndarray:
        p = self.p if p is None else p
        return np.maximum(x @ p["w1"] + p["b1"], 0) @ p["w2"] + p["b2"]

    def update(self, x: np.ndarray, a: np.ndarray, target: np.ndarray) -> float:
        """One Adam step on the Huber loss of ``Q(x, a)`` against ``target``."""
        p = self.p
        h = np.maximum(x @ p["w1"] + p["b1"], 0)
        q = h @ p["w2"] + p["b2"]
        rows = np.arange(len(a))
        err = q[rows, a] - target
        dq = np.zeros_like(q)
        dq[rows, a] = np.clip(err, -1.0, 1.0) / len(a)
        dh = (dq @ p["w2"].T) * (h > 0)
        grads = {"w2": h.T @ dq, "b2": dq.sum(0), "w1": x.T @ dh, "b1": dh.sum(0)}
        self.t += 1
        b1, b2, eps = 0.9, 0.999, 1e-8
        for k, g in grads.items():
            self.m[k] = b1 * self.m[k] + (1 - b1) * g
            self.v[k] = b2 * self.v[k] + (1 - b2) * g * g
            mhat = self.m[k] / (1 - b1 ** self.t)
            vhat = self.v[k] / (1 - b2 ** self.t)
            p[k] -= self.lr * mhat / (np.sqrt(vhat) + eps)
        return float(np.mean(np.minimum(np.abs(err), 1.0) * np.abs(err)))


@dataclass
class DQNRun:
    """What one DQN scout learned and what it cost."""

    transitions: int
    episodes: int
    updates: int
    cpu_s: float
    trajectory: Trajectory


def greedy_dqn_rollout(game: GameLike, policy: Any, max_steps: int) -> Trajectory:
    """Play ``policy(state) -> action index`` greedily; a repeated state ends it unsolved
    (a deterministic greedy loop never leaves)."""
    state: Any = game.initial()
    states, actions, outcomes = [state], [], []
    seen = {state}
    for _ in range(max_steps):
        if game.solved(state):
            break
        action = game.actions[int(policy(state))]
        result = game.step(state, action)
        actions.append(action)
        outcomes.append(result.outcome)
        state = result.state
        states.append(state)
        if result.done or state in seen:
            break
        seen.add(state)
    return Trajectory(states, actions, outcomes, bool(game.solved(state)))


def train_dqn(game: GameLike, cfg: DQNConfig, seed: int) -> DQNRun:
    """Learn ``game`` with DQN (same seed, same run), then roll the greedy policy out."""
    rng = np.random.default_rng(seed)
    cache: dict[Any, np.ndarray] = {}

    def feat(state: Any) -> np.ndarray:
        x = cache.get(state)
        if x is None:
            x = cache[state] = board_features(game, state)
        return x

    start = time.process_time()
    n_act = len(game.actions)
    d_in = feat(game.initial()).shape[0]
    net = _MLP(d_in, cfg.hidden, n_act, rng, cfg.lr)
    target = {k: v.copy() for k, v in net.p.items()}
    xs = np.zeros((cfg.buffer, d_in), np.float32)
    xs2 = np.zeros((cfg.buffer, d_in), np.float32)
    acts = np.zeros(cfg.buffer, np.int64)
    rews = np.zeros(cfg.buffer, np.float32)
    dones = np.zeros(cfg.buffer, np.float32)
    filled = cursor = transitions = updates = streak = 0

    def policy(state: Any) -> int:
        return int(np.argmax(net.forward(feat(state)[None])[0]))

    episode = 0
    for episode in range(1, cfg.episodes + 1):
        frac = min((episode - 1) / max(cfg.epsilon_episodes - 1, 1), 1.0)
        eps = cfg.epsilon_start + (cfg.epsilon_end - cfg.epsilon_start) * frac
        state: Any = game.initial()
        for _ in range(cfg.max_steps):
            a = int(rng.integers(n_act)) if rng.random() < eps else policy(state)
            result = game.step(state, game.actions[a])
            transitions += 1
            reward = float(result.reward) - cfg.step_cost
            if not result.legal:
                reward -= cfg.illegal_penalty
            if cfg.shaping:
                reward += cfg.gamma * -game.potential(result.state) + game.potential(state)
            xs[cursor], xs2[cursor] = feat(state), feat(result.state)
            acts[cursor], rews[cursor], dones[cursor] = a, reward, float(result.done)
            cursor = (cursor + 1) % cfg.buffer
            filled = min(filled + 1, cfg.buffer)
            if filled >= cfg.warmup:
                idx = rng.integers(filled, size=cfg.batch)
                nxt = net.forward(xs2[idx], target).max(axis=1)
                y = rews[idx] + cfg.gamma * (1.0 - dones[idx]) * nxt
                net.update(xs[idx], acts[idx], y)
                updates += 1
                if updates % cfg.target_every == 0:
                    target = {k: v.copy() for k, v in net.p.items()}
            state = result.state
            if result.done:
                break
        if cfg.stop_after_greedy_solves and episode % 10 == 0:
            check = greedy_dqn_rollout(game, policy, cfg.max_steps)
            transitions += len(check.actions)  # a check steps the game too: it counts
            streak = streak + 1 if check.solved else 0
            if streak >= cfg.stop_after_greedy_solves:
                break
    final = greedy_dqn_rollout(game, policy, cfg.max_steps)
    transitions += len(final.actions)
    return DQNRun(transitions, episode, updates, time.process_time() - start, final)
