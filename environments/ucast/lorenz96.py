"""Lorenz-96 (``dx_i/dt = (x_{i+1} - x_{i-2}) x_{i-1} - x_i + F`` on a ring of ``J``
variables), integrated by RK4, many trajectories at once, and cut into forecasting pairs.

The forecast problem: a forecaster sees a *noisy observation* ``y_t = x_t + e``
(``e ~ N(0, obs_noise^2)`` per variable, in standardised units: the analogue of analysis
error in weather prediction) and forecasts the true state ``x_{t + k tau}`` at the leads
``k = 1..rollout`` (``tau = lead_steps * dt`` model time units). Chaos grows the initial
error, so the target is uncertain given the input and an ensemble forecast is scored
against it.

Train and test pairs come from different trajectories whose initial conditions come from
different seeded streams of ``seed``; every state is standardised by the training states'
mean and standard deviation (one scalar each: the system is homogeneous along the ring).
The same ``seed`` and sizes give the same arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]


def tendency(x: Array, forcing: float = 8.0) -> Array:
    """The Lorenz-96 right-hand side along the last axis (periodic)."""
    return ((np.roll(x, -1, axis=-1) - np.roll(x, 2, axis=-1)) * np.roll(x, 1, axis=-1)
            - x + forcing)


def rk4_step(x: Array, dt: float, forcing: float = 8.0) -> Array:
    """One classical Runge-Kutta step of ``dt``."""
    k1 = tendency(x, forcing)
    k2 = tendency(x + 0.5 * dt * k1, forcing)
    k3 = tendency(x + 0.5 * dt * k2, forcing)
    k4 = tendency(x + dt * k3, forcing)
    return np.asarray(x + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4), dtype=float)


def simulate(rng: np.random.Generator, n_traj: int, n_samples: int, stride: int, *,
             n_vars: int = 40, forcing: float = 8.0, dt: float = 0.05,
             spinup: int = 1000) -> Array:
    """``n_traj`` trajectories from random states near the fixed point ``x = F``, spun up
    for ``spinup`` steps onto the attractor, then sampled every ``stride`` steps:
    ``(n_traj, n_samples, n_vars)``."""
    x = forcing + rng.normal(0.0, 1.0, size=(n_traj, n_vars))
    for _ in range(spinup):
        x = rk4_step(x, dt, forcing)
    out = np.empty((n_traj, n_samples, n_vars))
    for i in range(n_samples):
        out[:, i] = x
        for _ in range(stride):
            x = rk4_step(x, dt, forcing)
    return out


@dataclass(frozen=True)
class ForecastData:
    """Standardised pairs: ``train_inputs`` / ``test_inputs`` are noisy observations
    ``(n, J)``; ``train_targets`` the true state one lead later ``(n, J)``;
    ``test_targets`` the true states at leads ``1..rollout`` ``(rollout, n, J)``;
    ``test_states`` the true (noise-free) test initial states."""

    train_inputs: Array
    train_targets: Array
    test_inputs: Array
    test_targets: Array
    test_states: Array
    mean: float
    sd: float
    lead_time: float


def make_data(seed: int, *, n_train: int = 4000, n_test: int = 256, n_vars: int = 40,
              forcing: float = 8.0, dt: float = 0.05, lead_steps: int = 4,
              rollout: int = 2, obs_noise: float = 0.3, n_traj: int = 16,
              test_gap: int = 5) -> ForecastData:
    """Training pairs from ``n_traj`` trajectories (consecutive samples one lead apart),
    test cases from ``n_traj`` other trajectories, ``test_gap`` leads apart (each case
    followed ``rollout`` leads on). ``obs_noise`` is in standardised units."""
    root = np.random.SeedSequence(seed)
    train_ss, test_ss, noise_ss = root.spawn(3)
    per_traj = -(-n_train // n_traj) + 1
    train = simulate(np.random.default_rng(train_ss), n_traj, per_traj, lead_steps,
                     n_vars=n_vars, forcing=forcing, dt=dt)
    mean, sd = float(train.mean()), float(train.std())
    train = (train - mean) / sd
    x_in = train[:, :-1].reshape(-1, n_vars)[:n_train]
    x_out = train[:, 1:].reshape(-1, n_vars)[:n_train]

    per_test = -(-n_test // n_traj)
    test = simulate(np.random.default_rng(test_ss), n_traj, per_test * test_gap + rollout,
                    lead_steps, n_vars=n_vars, forcing=forcing, dt=dt)
    test = (test - mean) / sd
    starts = np.arange(per_test) * test_gap
    states = test[:, starts].reshape(-1, n_vars)[:n_test]
    targets = np.stack([test[:, starts + k].reshape(-1, n_vars)[:n_test]
                        for k in range(1, rollout + 1)])

    noise = np.random.default_rng(noise_ss)
    return ForecastData(
        train_inputs=x_in + noise.normal(0.0, obs_noise, size=x_in.shape),
        train_targets=x_out,
        test_inputs=states + noise.normal(0.0, obs_noise, size=states.shape),
        test_targets=targets, test_states=states, mean=mean, sd=sd,
        lead_time=lead_steps * dt,
    )
