"""The pendulum: gym's dynamics, seeded datasets of two qualities, a solvable swing-up."""

from __future__ import annotations

import numpy as np

from environments.vipo import evaluate, make_dataset, oracle_policy, random_return, step


def test_step_is_gyms_pendulum() -> None:
    th, dot, r = step(np.array([0.5]), np.array([1.0]), np.array([3.0]))  # torque clipped to 2
    dot2 = 1.0 + (15.0 * np.sin(0.5) + 6.0) * 0.05
    assert np.isclose(dot[0], dot2) and np.isclose(th[0], 0.5 + dot2 * 0.05)
    assert np.isclose(r[0], -(0.25 + 0.1 + 0.004))


def test_datasets_are_seeded_and_differ_in_quality() -> None:
    a, b = make_dataset("random", 4, 3), make_dataset("random", 4, 3)
    assert np.array_equal(a.th, b.th) and a.th.shape == (4, 200)
    medium = make_dataset("medium", 4, 3)
    assert medium.reward.sum(1).mean() > a.reward.sum(1).mean() + 300
    # only the medium data reaches the top
    assert (np.cos(a.th) < 0.9).all() and (np.cos(medium.th) > 0.9).any()


def test_oracle_swings_up_and_random_does_not() -> None:
    assert evaluate(oracle_policy(), 10, 0) > random_return(10, 0) + 1000
