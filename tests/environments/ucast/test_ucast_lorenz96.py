"""Lorenz-96: the integrator, the seeded pairs, and the ensemble scores against brute force."""

from __future__ import annotations

import itertools

import numpy as np

from environments.ucast import ensemble_scores, fair_crps, make_data, rk4_step, tendency


def test_tendency_and_the_fixed_point() -> None:
    x = np.full(40, 8.0)  # x_i = F is a fixed point
    assert np.allclose(tendency(x), 0.0) and np.allclose(rk4_step(x, 0.05), x)
    x = np.arange(5.0)  # (x_{i+1} - x_{i-2}) x_{i-1} - x_i + F, periodic
    expected = [(x[(i + 1) % 5] - x[(i - 2) % 5]) * x[(i - 1) % 5] - x[i] + 8 for i in range(5)]
    assert np.allclose(tendency(x), expected)


def test_the_same_seed_gives_the_same_pairs_and_shapes() -> None:
    a = make_data(3, n_train=200, n_test=32, rollout=2, n_traj=4)
    b = make_data(3, n_train=200, n_test=32, rollout=2, n_traj=4)
    c = make_data(4, n_train=200, n_test=32, rollout=2, n_traj=4)
    assert a.train_inputs.shape == a.train_targets.shape == (200, 40)
    assert a.test_inputs.shape == (32, 40) and a.test_targets.shape == (2, 32, 40)
    for name in ("train_inputs", "train_targets", "test_inputs", "test_targets"):
        assert np.array_equal(getattr(a, name), getattr(b, name))
    assert not np.allclose(a.train_targets, c.train_targets)
    # standardised by the training states; inputs are the states plus the noise
    assert abs(a.mean - 2.35) < 0.5 and abs(a.sd - 3.6) < 0.5
    noise = a.test_inputs - a.test_states
    assert 0.2 < noise.std() < 0.4 and abs(noise.mean()) < 0.05


def test_targets_follow_the_dynamics() -> None:
    d = make_data(0, n_train=100, n_test=8, rollout=2, n_traj=4, obs_noise=0.0)
    x = d.test_states * d.sd + d.mean
    for k in range(2):
        for _ in range(4):  # lead_steps
            x = rk4_step(x, 0.05)
        assert np.allclose(x, d.test_targets[k] * d.sd + d.mean, atol=1e-8)
    assert np.array_equal(d.test_inputs, d.test_states)  # no noise asked for


def test_fair_crps_matches_brute_force() -> None:
    rng = np.random.default_rng(0)
    ens, y = rng.normal(size=(5, 3, 4)), rng.normal(size=(3, 4))
    m = ens.shape[0]
    brute = np.abs(ens - y).mean(axis=0) - sum(
        np.abs(ens[i] - ens[j]) for i, j in itertools.product(range(m), repeat=2)
    ) / (2 * m * (m - 1))
    assert np.allclose(fair_crps(ens, y), brute)
    # a point mass at the truth scores 0; a single-member "ensemble" is refused
    assert np.allclose(fair_crps(np.repeat(y[None], 4, axis=0), y), 0.0)


def test_a_calibrated_ensemble_has_ssr_near_one() -> None:
    rng = np.random.default_rng(1)
    centre = rng.normal(size=(20000,))
    truth = centre + rng.normal(size=centre.shape)
    ens = centre[None] + rng.normal(size=(8, *centre.shape))  # same law as the truth
    scores = ensemble_scores(ens, truth)
    assert abs(scores["ssr"] - 1.0) < 0.03
    narrow = ensemble_scores(centre[None] + 0.3 * rng.normal(size=(8, *centre.shape)), truth)
    assert narrow["ssr"] < 0.5 and narrow["crps"] > scores["crps"]
