"""The pendulum swing-up (gym's Pendulum dynamics, numpy, vectorised), offline datasets and
the evaluation of a grid policy.

Dynamics: ``thdot' = clip(thdot + (3 g / 2 sin th + 3 u) dt, -8, 8)``, ``th' = th + thdot' dt``
(g = 10, m = l = 1, dt = 0.05), torque ``u`` in [-2, 2]; reward ``-(th^2 + 0.1 thdot^2 +
0.001 u^2)`` with ``th`` wrapped to [-pi, pi); observation ``(cos th, sin th, thdot)``;
episodes of 200 steps from hanging down (``th ~ pi + U(-0.3, 0.3)``, ``thdot ~ U(-0.5,
0.5)``), so the torque limit forces a swing-up, and data that never reached the top leaves
the model to extrapolate there (gym starts anywhere, which makes offline data cover every
state; on development seeds a plain model then reached the oracle's return from 2 random
episodes, a ceiling no method could beat).

A *grid policy* is an action index per cell of a ``Grid`` over (th, thdot) (the policy class
VIPO's planner here returns); ``oracle_policy`` is value iteration on the true dynamics over
the same grid and actions, the 100 of the normalised return (uniform random actions are 0).
Datasets: ``random`` (uniform actions) and ``medium`` (the oracle's action with
probability 0.5, else uniform; D4RL's medium-quality analogue).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]
ACTIONS = np.linspace(-2.0, 2.0, 9)
DT, G, MAX_SPEED, HORIZON = 0.05, 10.0, 8.0, 200


def _wrap(th: Array) -> Array:
    return (th + np.pi) % (2 * np.pi) - np.pi


def step(th: Array, thdot: Array, u: Array) -> tuple[Array, Array, Array]:
    """One step for arrays of states: (th', thdot', reward)."""
    u = np.clip(u, -2.0, 2.0)
    reward = -(_wrap(th) ** 2 + 0.1 * thdot**2 + 0.001 * u**2)
    thdot2 = np.clip(thdot + (3 * G / 2 * np.sin(th) + 3.0 * u) * DT, -MAX_SPEED, MAX_SPEED)
    return _wrap(th + thdot2 * DT), thdot2, reward


def obs(th: Array, thdot: Array) -> Array:
    """Observations (cos th, sin th, thdot), (N, 3)."""
    return np.column_stack([np.cos(th), np.sin(th), thdot])


@dataclass(frozen=True)
class Grid:
    """A regular grid over (th, thdot): ``n_th`` x ``n_dot`` cells."""

    n_th: int = 51
    n_dot: int = 41

    @property
    def th(self) -> Array:
        return np.linspace(-np.pi, np.pi, self.n_th, endpoint=False)

    @property
    def dot(self) -> Array:
        return np.linspace(-MAX_SPEED, MAX_SPEED, self.n_dot)

    def cell(self, th: Array, thdot: Array) -> NDArray[np.int64]:
        """The nearest cell's flat index of each state."""
        i = np.rint((_wrap(th) + np.pi) / (2 * np.pi) * self.n_th).astype(int) % self.n_th
        j = np.clip(np.rint((thdot + MAX_SPEED) / (2 * MAX_SPEED) * (self.n_dot - 1)), 0,
                    self.n_dot - 1).astype(int)
        return np.asarray(i * self.n_dot + j)

    def states(self) -> tuple[Array, Array]:
        """(th, thdot) of every cell, flat (cells in ``cell`` order)."""
        th, dot = np.meshgrid(self.th, self.dot, indexing="ij")
        return th.ravel(), dot.ravel()


def value_iteration(next_th: Array, next_dot: Array, reward: Array, grid: Grid,
                    gamma: float = 0.98, iters: int = 400) -> NDArray[np.int64]:
    """Greedy grid policy of a (cells, actions) model: next states interpolated bilinearly
    onto the grid's values."""
    fi = (_wrap(next_th) + np.pi) / (2 * np.pi) * grid.n_th
    fj = np.clip((next_dot + MAX_SPEED) / (2 * MAX_SPEED) * (grid.n_dot - 1), 0,
                 grid.n_dot - 1 - 1e-9)
    i0, j0 = np.floor(fi).astype(int), np.floor(fj).astype(int)
    wi, wj = fi - i0, fj - j0
    i0, i1, j1 = i0 % grid.n_th, (i0 + 1) % grid.n_th, np.minimum(j0 + 1, grid.n_dot - 1)
    idx = [i0 * grid.n_dot + j0, i0 * grid.n_dot + j1, i1 * grid.n_dot + j0,
           i1 * grid.n_dot + j1]
    w = [(1 - wi) * (1 - wj), (1 - wi) * wj, wi * (1 - wj), wi * wj]
    v = np.zeros(grid.n_th * grid.n_dot)
    for _ in range(iters):
        q = reward + gamma * sum(wk * v[ik] for wk, ik in zip(w, idx, strict=True))
        v = q.max(axis=1)
    return np.asarray(q.argmax(axis=1))


@lru_cache(maxsize=2)
def oracle_policy(grid: Grid = Grid()) -> NDArray[np.int64]:
    """Value iteration on the true dynamics over the grid (the normaliser's 100)."""
    th, dot = grid.states()
    th_a, dot_a = np.repeat(th, len(ACTIONS)), np.repeat(dot, len(ACTIONS))
    u = np.tile(ACTIONS, len(th))
    nth, ndot, r = step(th_a, dot_a, u)
    shape = (len(th), len(ACTIONS))
    return value_iteration(nth.reshape(shape), ndot.reshape(shape), r.reshape(shape), grid)


def _rollout(policy: NDArray[np.int64] | None, grid: Grid, episodes: int, rng: np.random.Generator,
             eps: float = 0.0) -> tuple[Array, Array, Array, Array]:
    th = np.pi + rng.uniform(-0.3, 0.3, episodes)  # hanging down: the swing-up task
    dot = rng.uniform(-0.5, 0.5, episodes)
    ths, dots, us, rs = [], [], [], []
    for _ in range(HORIZON):
        random_u = ACTIONS[rng.integers(0, len(ACTIONS), episodes)]
        if policy is None:
            u = random_u
        else:
            u = ACTIONS[policy[grid.cell(th, dot)]]
            u = np.where(rng.random(episodes) < eps, random_u, u)
        ths.append(th)
        dots.append(dot)
        us.append(u)
        th, dot, r = step(th, dot, u)
        rs.append(r)
    return (np.stack(ths, 1), np.stack(dots, 1), np.stack(us, 1), np.stack(rs, 1))


@dataclass(frozen=True)
class Dataset:
    """Transitions of whole episodes, (episodes, steps) each; observations via ``obs``."""

    th: Array
    thdot: Array
    action: Array
    reward: Array

    def transitions(self) -> tuple[Array, Array, Array, Array]:
        """(obs, action, reward, next obs), flat, within episodes."""
        o = obs(self.th[:, :-1].ravel(), self.thdot[:, :-1].ravel())
        o2 = obs(self.th[:, 1:].ravel(), self.thdot[:, 1:].ravel())
        return o, self.action[:, :-1].ravel(), self.reward[:, :-1].ravel(), o2


def make_dataset(quality: str, episodes: int, seed: int) -> Dataset:
    """``random`` or ``medium`` offline data (seeded)."""
    rng = np.random.default_rng(seed)
    if quality == "random":
        parts = _rollout(None, Grid(), episodes, rng)
    elif quality == "medium":
        parts = _rollout(oracle_policy(), Grid(), episodes, rng, eps=0.5)
    else:
        raise ValueError(f"quality must be random or medium, got {quality!r}")
    return Dataset(*parts)


def evaluate(policy: NDArray[np.int64], episodes: int, seed: int,
             grid: Grid = Grid()) -> float:
    """Mean undiscounted return of a grid policy on the true pendulum."""
    return float(_rollout(np.asarray(policy), grid, episodes,
                          np.random.default_rng(seed))[3].sum(axis=1).mean())


def trajectories(policy: NDArray[np.int64] | None, episodes: int, seed: int,
                 eps: float = 0.0) -> Dataset:
    """Episodes of a grid policy (``None``: uniform random), with probability ``eps`` of a
    random action per step."""
    return Dataset(*_rollout(policy, Grid(), episodes, np.random.default_rng(seed), eps))


def random_return(episodes: int, seed: int) -> float:
    """Mean return of uniform random actions (the normaliser's 0)."""
    return float(_rollout(None, Grid(), episodes, np.random.default_rng(seed))[3]
                 .sum(axis=1).mean())
