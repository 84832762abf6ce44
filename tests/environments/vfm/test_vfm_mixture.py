"""The VFM world: the closed-form posterior agrees with importance sampling from the prior,
cells are reproducible, and the operators are what they say."""

from __future__ import annotations

import numpy as np
import pytest

from environments.vfm import make_inverse_problem, posterior, sample_posterior


def test_posterior_matches_importance_sampling() -> None:
    p = make_inverse_problem(3, n_obs=4, sigma=0.3)
    post = posterior(p.prior, p.a, p.sigma, p.y)
    rng = np.random.default_rng(0)
    x = p.prior.sample(400_000, rng)
    exact = sample_posterior(post, 20_000, rng)
    for i in range(4):
        logw = -0.5 * ((x @ p.a.T - p.y[i]) ** 2).sum(axis=1) / p.sigma**2
        w = np.exp(logw - logw.max())
        w /= w.sum()
        is_mean = (w[:, None] * x).sum(axis=0)
        is_var = (w[:, None] * (x - is_mean) ** 2).sum(axis=0)
        assert np.allclose(exact[i].mean(axis=0), is_mean, atol=0.05)
        assert np.allclose(exact[i].var(axis=0), is_var, rtol=0.1, atol=0.02)
    assert np.allclose(post.weights.sum(axis=1), 1.0)


def test_cells_are_seeded_and_operators_fixed() -> None:
    a, b = make_inverse_problem(5), make_inverse_problem(5)
    assert np.array_equal(a.x_train, b.x_train) and np.array_equal(a.y, b.y)
    assert not np.array_equal(a.x_train, make_inverse_problem(6).x_train)
    inpaint = make_inverse_problem(5, kind="inpaint")
    assert np.array_equal(inpaint.a, [[1.0, 0.0]])
    assert np.isclose(np.linalg.norm(a.a), 1.0)
    with pytest.raises(ValueError):
        make_inverse_problem(5, kind="blur")
