"""TPG(k) and the difference in means on hand-made data."""

from __future__ import annotations

import numpy as np

from methods.tpg.estimators import difference_in_means, lagged_variance, tpg, tpg_summands


def test_tpg_zero_is_the_horvitz_thompson_difference() -> None:
    rng = np.random.default_rng(0)
    a, y = (rng.random(400) < 0.5).astype(float), rng.normal(size=400)
    ht = np.mean(a * y / 0.5 - (1 - a) * y / 0.5)
    out = tpg({"y": y, "a": a, "p": 0.5}, {"k": 0}, 0)
    assert np.isclose(out["estimate"], ht)


def test_summands_sum_the_next_k_outcomes() -> None:
    y = np.arange(6, dtype=float)
    a = np.array([1, 0, 1, 0, 1, 0], dtype=float)
    xi = tpg_summands(y, a, 0.5, 2)
    assert np.allclose(xi, [2 * (0 + 1 + 2), -2 * (1 + 2 + 3), 2 * (2 + 3 + 4),
                            -2 * (3 + 4 + 5), 2 * (4 + 5), -2 * 5])


def test_lagged_variance_is_the_iid_variance_at_lag_zero() -> None:
    x = np.random.default_rng(1).normal(size=1000)
    assert np.isclose(lagged_variance(x, 0), x.var() / len(x))


def test_difference_in_means() -> None:
    y = np.array([1.0, 3.0, 2.0, 6.0])
    a = np.array([0, 1, 0, 1])
    assert difference_in_means({"y": y, "a": a, "p": 0.5}, {}, 0)["estimate"] == 3.0
