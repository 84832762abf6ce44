"""Seeded synthetic 2-D vehicle trajectories at an intersection, with a multimodal future and
structure at two time scales, in agent-centric coordinates.

Each agent drives a gently curved road (route curvature ``kappa``, the low-frequency part)
towards an intersection ``d`` metres beyond its last observed position, with a smooth speed
profile (``v0``, acceleration ``accel`` during the history). At the intersection it goes
**straight**, turns **left** or **right** (a quarter circle of radius ``radius``, slowing to
at most ``turn_speed``) or **stops** at the stop line; the mode is drawn at random and is
independent of the history, so the future is genuinely multimodal. On top of the road's
centreline the agent weaves around its lane centre with an agent-specific amplitude,
frequency and phase (``amp`` 0.05-0.35 m, ``freq`` 0.4-1.5 Hz: the high-frequency part,
which continues into the future and can only be read off the history), plus small
observation noise. ``dt`` = 0.1 s; the history is ``n_hist`` steps, the future ``n_fut``.

Coordinates are agent-centric: translated to the last observed position and rotated so
that the heading estimated from the last ``heading_lag`` observed displacements is +x (as
a tracker would; the weaving tilts it a little).

A :class:`TrajectorySplit` holds ``train`` / ``test`` sets drawn from one seed. No Inspect
imports: pure numpy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]

MODES = ("straight", "left", "right", "stop")
MODE_PROBS = (0.4, 0.2, 0.2, 0.2)
DT = 0.1


@dataclass(frozen=True)
class Trajectories:
    """``history`` (n, n_hist, 2) and ``future`` (n, n_fut, 2) in metres, agent-centric;
    ``mode`` indexes :data:`MODES`; ``freq``/``amp`` are the weaving's (for diagnostics)."""

    history: Array
    future: Array
    mode: IntArray
    freq: Array
    amp: Array

    def __len__(self) -> int:
        return len(self.history)


@dataclass(frozen=True)
class TrajectorySplit:
    train: Trajectories
    test: Trajectories
    seed: int


def _speed_and_yaw(rng: np.random.Generator, n: int, n_hist: int, n_fut: int,
                   ) -> tuple[Array, Array, IntArray, Array]:
    """Per agent and step: the speed (m/s) and the centreline's yaw rate (rad/s)."""
    steps = n_hist + n_fut
    t = np.arange(steps, dtype=np.float64) * DT
    t_last = (n_hist - 1) * DT
    v0 = rng.uniform(6.0, 12.0, n)
    accel = rng.uniform(-0.8, 0.8, n)
    kappa = rng.uniform(-0.01, 0.01, n)  # route curvature (1/m), the low-frequency bend
    d = rng.uniform(3.0, 12.0, n)  # metres from the last observation to the intersection
    radius = rng.uniform(9.0, 15.0, n)
    turn_speed = rng.uniform(4.5, 7.0, n)
    mode = rng.choice(len(MODES), size=n, p=MODE_PROBS).astype(np.int64)

    speed = np.empty((n, steps))
    yaw_rate = np.empty((n, steps))
    for i in range(n):
        v_last = max(v0[i] + accel[i] * t_last, 2.0)
        v = np.maximum(v0[i] + accel[i] * t, 2.0)  # the history's profile, extended
        s_rel = 0.0  # arc length travelled since the last observation
        turning = 0.0  # arc length travelled inside the turn
        w = np.full(steps, kappa[i])
        for k in range(n_hist, steps):
            if mode[i] == 0:  # straight on: the same smooth profile
                vk = v[k]
            elif mode[i] == 3:  # stop at the stop line, 1 m before the intersection
                stop_at = max(d[i] - 1.0, 1.0)
                decel = v_last**2 / (2.0 * stop_at)
                vk = max(v_last**2 - 2.0 * decel * s_rel, 0.0) ** 0.5
            else:  # brake smoothly towards the turning speed, then follow the arc
                target = min(turn_speed[i], v_last)
                vk = target + (v_last - target) * np.exp(-(k - n_hist + 1) * DT / 0.8)
            ds = vk * DT
            if mode[i] in (1, 2) and s_rel + ds > d[i] and turning < radius[i] * np.pi / 2:
                w[k] = (1.0 if mode[i] == 1 else -1.0) * vk / radius[i]
                turning += ds
            else:
                w[k] = kappa[i] * vk
            s_rel += ds
            v[k] = vk
        w[:n_hist] = kappa[i] * v[:n_hist]
        speed[i], yaw_rate[i] = v, w
    return speed, yaw_rate, mode, t


def make_trajectories(n: int, seed: int = 0, n_hist: int = 20, n_fut: int = 30,
                      noise: float = 0.03, heading_lag: int = 5) -> Trajectories:
    """``n`` seeded agents (same seed, same data)."""
    rng = np.random.default_rng(seed)
    speed, yaw_rate, mode, t = _speed_and_yaw(rng, n, n_hist, n_fut)
    yaw = np.cumsum(yaw_rate * DT, axis=1) + rng.uniform(-np.pi, np.pi, (n, 1))
    heading = np.stack([np.cos(yaw), np.sin(yaw)], axis=-1)
    centre = np.cumsum(speed[..., None] * heading * DT, axis=1)
    centre += rng.uniform(-50.0, 50.0, (n, 1, 2))
    amp = rng.uniform(0.05, 0.35, n)
    freq = rng.uniform(0.4, 1.5, n)
    phase = rng.uniform(0.0, 2 * np.pi, n)
    lateral = amp[:, None] * np.sin(2 * np.pi * freq[:, None] * t[None, :] + phase[:, None])
    normal = np.stack([-heading[..., 1], heading[..., 0]], axis=-1)
    xy = centre + lateral[..., None] * normal + rng.normal(0.0, noise, centre.shape)

    origin = xy[:, n_hist - 1]
    step = origin - xy[:, n_hist - 1 - heading_lag]
    theta = np.arctan2(step[:, 1], step[:, 0])
    c, s = np.cos(theta), np.sin(theta)
    rot = np.stack([np.stack([c, s], -1), np.stack([-s, c], -1)], -2)  # rows: x', y'
    local = np.einsum("nij,ntj->nti", rot, xy - origin[:, None, :])
    return Trajectories(history=local[:, :n_hist], future=local[:, n_hist:], mode=mode,
                        freq=freq, amp=amp)


def make_split(seed: int = 0, n_train: int = 2000, n_test: int = 500, n_hist: int = 20,
               n_fut: int = 30) -> TrajectorySplit:
    """Independent train and test agents from one seed (two child streams)."""
    train_seed, test_seed = np.random.SeedSequence(seed).spawn(2)
    return TrajectorySplit(
        train=make_trajectories(n_train, seed=int(train_seed.generate_state(1)[0]),
                                n_hist=n_hist, n_fut=n_fut),
        test=make_trajectories(n_test, seed=int(test_seed.generate_state(1)[0]),
                               n_hist=n_hist, n_fut=n_fut),
        seed=seed)
