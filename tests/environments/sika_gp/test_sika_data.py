"""The synthetic regression data."""

from __future__ import annotations

import numpy as np

from environments.sika_gp import latent, make_regression


def test_regression_is_seeded_and_noisy_around_the_latent() -> None:
    a, b = make_regression(n=300, seed=2), make_regression(n=300, seed=2)
    assert np.array_equal(a.y, b.y)
    resid = a.y - latent(a.x)
    assert abs(resid.std() - a.noise_sd) < 0.03
    assert np.allclose(a.f_test, latent(a.x_test))
