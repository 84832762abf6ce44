"""The three GPs: sparse dyadic features, and predictions close to the exact GP."""

from __future__ import annotations

import numpy as np

from methods.sika_gp.gps import dyadic_features, dyadic_levels, exact_gp, inducing_gp, sika_gp


def test_each_input_activates_two_hats_per_level() -> None:
    x = np.random.default_rng(0).random(100)
    levels = dyadic_levels(128)
    phi, level_of = dyadic_features(x, levels, 0.0, 1.0)
    assert phi.shape[1] <= 128 and phi.shape[1] == len(level_of)
    assert phi.nnz == 100 * 2 * (levels + 1)  # O(log M) per row
    assert np.allclose(np.asarray(phi.sum(1)).ravel(), levels + 1)  # hats partition unity


def test_the_approximations_predict_like_the_exact_gp() -> None:
    rng = np.random.default_rng(1)
    x = rng.random(300)
    y = np.sin(6 * x) + rng.normal(0, 0.1, 300)
    xt = np.linspace(0.05, 0.95, 50)
    inputs = {"x": x, "y": y, "x_test": xt}
    exact = exact_gp(inputs, {}, 0)
    for method in (inducing_gp, sika_gp):
        out = method(inputs, {"m": 64}, 0)
        assert np.sqrt(np.mean((out["mean"] - np.sin(6 * xt)) ** 2)) < 0.1
        assert (out["var"] > 0).all()
    assert np.sqrt(np.mean((exact["mean"] - np.sin(6 * xt)) ** 2)) < 0.1
