"""A nonstationary birth-death system (engagement levels) with carryover.

Each period ``t`` the experimenter treats with probability ``p`` (Bernoulli over time). The
state (an engagement level ``0..S-1``) moves up with a probability that drifts with the time
of day and rises under treatment, and down with a fixed probability; the outcome is a
time-varying drift around ``base`` plus ``slope * (state - centre)`` plus
``immediate * a`` plus Gaussian noise. With a
small negative ``immediate`` and a positive effect on the up-move, treatment costs a little
now and pays later: the naive difference in means sees only the cost, which is the
interference the TPG paper addresses.

Everything a check needs is exact, by propagating state distributions (no Monte Carlo):

* :func:`exact_gate`: the global average treatment effect, always-treat minus never-treat
  over the horizon, from the same initial state;
* :func:`expected_tpg`: ``E[TPG(k)]`` under the experiment's own randomisation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]


@dataclass(frozen=True)
class MarkovSystem:
    """Transition matrices ``P[t, a]`` (T x 2 x S x S) and mean outcomes ``r[t, a]`` (T x 2 x S)."""

    P: Array
    r: Array
    noise_sd: float
    initial: int

    @property
    def horizon(self) -> int:
        return int(self.P.shape[0])

    @property
    def states(self) -> int:
        return int(self.P.shape[2])


@dataclass(frozen=True)
class Trajectory:
    """One experiment: the treatment sequence ``a``, the outcomes ``y`` and the states."""

    a: NDArray[np.int64]
    y: Array
    s: NDArray[np.int64]
    p: float


def make_system(
    horizon: int = 2000,
    states: int = 6,
    period: int = 200,
    up: float = 0.25,
    up_swing: float = 0.1,
    down: float = 0.55,
    effect_up: float = 0.2,
    slope: float = 0.5,
    immediate: float = -0.1,
    base: float = 0.0,
    base_swing: float = 0.5,
    noise_sd: float = 1.0,
    initial: int = 2,
) -> MarkovSystem:
    """The nonstationary system (deterministic given its parameters)."""
    t = np.arange(horizon)
    u = np.clip(up + up_swing * np.sin(2 * np.pi * t / period), 0.01, 0.99)
    P = np.zeros((horizon, 2, states, states))
    for a in (0, 1):
        ua = np.clip(u + effect_up * a, 0.0, 1.0 - down)
        for s in range(states):
            go_up = ua if s < states - 1 else np.zeros(horizon)
            go_down = down if s > 0 else 0.0
            if s < states - 1:
                P[:, a, s, s + 1] = go_up
            if s > 0:
                P[:, a, s, s - 1] = go_down
            P[:, a, s, s] = 1.0 - go_up - go_down
    drift = base + base_swing * np.cos(2 * np.pi * t / period)
    level = slope * (np.arange(states) - (states - 1) / 2)
    r = drift[:, None, None] + level[None, None, :] + immediate * np.arange(2)[None, :, None]
    return MarkovSystem(P=P, r=r, noise_sd=float(noise_sd), initial=int(initial))


def simulate(system: MarkovSystem, p: float, seed: int) -> Trajectory:
    """One Bernoulli(p)-randomised experiment over the horizon (seeded)."""
    rng = np.random.default_rng(seed)
    T, S = system.horizon, system.states
    a = (rng.random(T) < p).astype(np.int64)
    u = rng.random(T)
    noise = rng.normal(0.0, system.noise_sd, T)
    cum = np.cumsum(system.P, axis=3)
    s = np.empty(T, dtype=np.int64)
    y = np.empty(T)
    state = system.initial
    for t in range(T):
        s[t] = state
        y[t] = system.r[t, a[t], state] + noise[t]
        state = min(int(np.searchsorted(cum[t, a[t], state], u[t], side="right")), S - 1)
    return Trajectory(a=a, y=y, s=s, p=float(p))


def _start(system: MarkovSystem) -> Array:
    mu = np.zeros(system.states)
    mu[system.initial] = 1.0
    return mu


def exact_gate(system: MarkovSystem) -> float:
    """Mean outcome over the horizon under always-treat minus under never-treat."""
    total = 0.0
    for a, sign in ((1, 1.0), (0, -1.0)):
        mu = _start(system)
        for t in range(system.horizon):
            total += sign * float(mu @ system.r[t, a])
            mu = mu @ system.P[t, a]
    return total / system.horizon


def expected_tpg(system: MarkovSystem, p: float, k: int) -> float:
    """``E[TPG(k)]`` under Bernoulli(p) randomisation, exactly.

    ``TPG(k) = (1/T) sum_t w_t sum_{j=0..k, t+j<T} y_{t+j}`` with
    ``w_t = (a_t - p) / (p (1 - p))``. As ``a_t`` is independent of the state at ``t``,
    ``E[w_t y_{t+j}] = E_{s_t}[E(y_{t+j} | s_t, a_t=1) - E(y_{t+j} | s_t, a_t=0)]`` with the
    mixed policy after ``t``; both are propagated here.
    """
    T = system.horizon
    M = p * system.P[:, 1] + (1 - p) * system.P[:, 0]            # T x S x S
    rbar = p * system.r[:, 1] + (1 - p) * system.r[:, 0]          # T x S
    mu = np.empty((T, system.states))
    cur = _start(system)
    for t in range(T):
        mu[t] = cur
        cur = cur @ M[t]
    dP = system.P[:, 1] - system.P[:, 0]                           # T x S x S
    total = float(np.einsum("ts,ts->", mu, system.r[:, 1] - system.r[:, 0]))
    h = rbar.copy()  # h_m[u] = E[y_{u+m} | s_u, mixed policy], m = 0 here
    for j in range(1, k + 1):
        # E[y_{t+j} | s_t, a_t] = P[t, a] @ h_{j-1}[t+1]
        nxt = h[1:T - j + 1]                                        # h_{j-1} at t+1
        total += float(np.einsum("ts,tsq,tq->", mu[:T - j], dP[:T - j], nxt))
        h = np.einsum("usq,uq->us", M[:T - j], h[1:T - j + 1])     # h_j[u], u < T - j
    return total / T
