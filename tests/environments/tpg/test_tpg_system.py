"""The nonstationary Markov system: valid transitions, seeded runs, exact expectations."""

from __future__ import annotations

import numpy as np

from environments.tpg import exact_gate, expected_tpg, make_system, simulate


def test_transitions_are_stochastic_and_nonstationary() -> None:
    system = make_system(horizon=300)
    assert np.allclose(system.P.sum(axis=3), 1.0)
    assert (system.P >= 0).all()
    assert not np.allclose(system.P[0], system.P[50])  # the up-move drifts with time


def test_simulation_is_seeded() -> None:
    system = make_system(horizon=200)
    a, b = simulate(system, 0.5, 7), simulate(system, 0.5, 7)
    assert np.array_equal(a.y, b.y) and np.array_equal(a.a, b.a)
    assert not np.array_equal(a.y, simulate(system, 0.5, 8).y)


def test_gate_matches_always_treat_minus_never_treat_by_monte_carlo() -> None:
    system = make_system(horizon=60, noise_sd=0.0)
    means = [np.mean([simulate(system, p, s).y.mean() for s in range(400)]) for p in (1.0, 0.0)]
    assert abs((means[0] - means[1]) - exact_gate(system)) < 0.05


def test_expected_tpg_matches_monte_carlo() -> None:
    system = make_system(horizon=80)
    k, p = 3, 0.5
    estimates = []
    for seed in range(600):
        traj = simulate(system, p, seed)
        w = (traj.a - p) / (p * (1 - p))
        windows = np.array([traj.y[t:t + k + 1].sum() for t in range(len(traj.y))])
        estimates.append(float(np.mean(w * windows)))
    se = np.std(estimates) / np.sqrt(len(estimates))
    assert abs(np.mean(estimates) - expected_tpg(system, p, k)) < 4 * se


def test_truncation_trades_the_immediate_cost_for_the_carryover() -> None:
    system = make_system()
    assert expected_tpg(system, 0.5, 0) < 0 < exact_gate(system)
    values = [expected_tpg(system, 0.5, k) for k in (0, 5, 10, 30)]
    assert values == sorted(values)  # longer trajectories recover more of the GATE
