"""harness.stats at the edges: Wilson tables, Firth under separation, the separation LP,
the binomial GLMM and the paired item bootstrap (issue 18).

References: Wilson intervals from Newcombe (1998), "Two-sided confidence intervals for the
single proportion: comparison of seven methods", Statistics in Medicine 17:857-872,
Table II (method 3, the score interval), cross-checked against statsmodels. Firth's
estimates against closed forms that Firth (1993) and Heinze & Schemper (2002, sec. 2)
state: in a saturated model the penalty adds 1/2 to every cell count, so an intercept-only
fit of s of n is ``log((s + 1/2) / (n - s + 1/2))`` and a 2x2 table's log odds ratio is
the Haldane-Anscombe corrected one; and, on a separated data set with a continuous
covariate, against the penalised likelihood maximised by a general-purpose optimiser
(an independent computation; no published coefficient is quoted from memory).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize
from scipy.special import expit
from statsmodels.stats.proportion import proportion_confint

from harness.stats import (
    binary_mean_ci,
    binomial_glmm,
    firth_logistic,
    item_bootstrap,
    separated_rows,
    wilson_ci,
    wilson_interval,
)

# Newcombe (1998), Table II, method 3 (Wilson score interval without continuity correction)
NEWCOMBE = [
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0000, 0.1611),
    (1, 29, 0.0061, 0.1718),
]


@pytest.mark.parametrize(("x", "n", "lo", "hi"), NEWCOMBE)
def test_wilson_matches_newcombe_table(x: int, n: int, lo: float, hi: float) -> None:
    est = wilson_ci(x, n)
    assert (est.lo, est.hi) == (pytest.approx(lo, abs=6e-5), pytest.approx(hi, abs=6e-5))
    ref = proportion_confint(x, n, method="wilson")
    assert (est.lo, est.hi) == pytest.approx(ref, abs=1e-12)
    assert wilson_interval(x / n, n) == pytest.approx((est.lo, est.hi))


def test_binary_mean_ci_never_zero_width_and_inside_unit_interval() -> None:
    ones = binary_mean_ci([1.0] * 40, cluster=[i // 2 for i in range(40)])  # 20 items x 2
    # no variance: the Wilson interval for the 20 items, n / (n + z^2) at all successes
    z2 = 1.959963984540054**2
    assert ones.hi == 1.0 and ones.lo == pytest.approx(20 / (20 + z2)) and ones.width > 0
    low = binary_mean_ci([1.0] + [0.0] * 19)
    assert 0.0 <= low.lo < 0.05 < low.hi <= 1.0  # a t interval would go below 0 here
    assert (low.lo, low.hi) == pytest.approx(proportion_confint(1, 20, method="wilson"))
    # clusters of one: only the G/(G-1) factor of the clustered SE widens it, a little
    clustered = binary_mean_ci([1.0] + [0.0] * 19, cluster=list(range(20)))
    assert low.width < clustered.width < low.width * 1.05


def test_binary_mean_ci_widens_with_clustering() -> None:
    """Epochs that copy each other (deff = 2) halve the effective n: the interval is the
    Wilson interval for the number of items, not for the number of rows."""
    per_item = [1.0] * 7 + [0.0] * 13
    est = binary_mean_ci(per_item * 2, cluster=list(range(20)) * 2)
    alone = wilson_ci(7, 20)
    # G/(G-1) small-sample factor of the clustered SE makes deff 2 * 20/19
    assert est.width > alone.width * 0.99
    indep = binary_mean_ci(per_item * 2)
    assert est.width > indep.width


def test_firth_closed_forms() -> None:
    fit = firth_logistic(np.ones((1, 1)), [20], [20])  # separated: the MLE is +inf
    assert fit.converged and fit.coef[0] == pytest.approx(math.log(20.5 / 0.5), abs=1e-8)
    X = np.array([[1.0, 0.0], [1.0, 1.0]])
    fit = firth_logistic(X, [3, 10], [10, 10])
    assert fit.coef[0] == pytest.approx(math.log(3.5 / 7.5), abs=1e-8)
    assert fit.coef[1] == pytest.approx(math.log((10.5 / 0.5) / (3.5 / 7.5)), abs=1e-8)
    # Bernoulli rows and aggregated rows give the same fit
    rows = np.repeat(X, 10, axis=0)
    y = np.r_[np.ones(3), np.zeros(7), np.ones(10)]
    assert firth_logistic(rows, y).coef == pytest.approx(fit.coef, abs=1e-8)


def _penalised(X: np.ndarray, y: np.ndarray, b: np.ndarray) -> float:
    mu = expit(X @ b)
    info = X.T @ (X * (mu * (1 - mu))[:, None])
    ll = np.sum(y * np.log(mu) + (1 - y) * np.log1p(-mu))
    return float(ll + 0.5 * np.linalg.slogdet(info)[1])


def test_firth_maximises_the_penalised_likelihood_under_separation() -> None:
    rng = np.random.default_rng(7)
    x = rng.normal(size=40)
    z = rng.normal(size=40)
    X = np.column_stack([np.ones(40), x, z])
    y = (x > 0.1).astype(float)  # x separates y completely
    assert separated_rows(X, y).all()
    fit = firth_logistic(X, y)
    ref = optimize.minimize(lambda b: -_penalised(X, y, b), np.zeros(3), method="BFGS",
                            options={"gtol": 1e-10})
    assert fit.converged
    # at least as high as BFGS gets, and a stationary point of the penalised likelihood
    assert fit.penalized_loglik >= -ref.fun - 1e-9
    assert fit.penalized_loglik == pytest.approx(_penalised(X, y, fit.coef), abs=1e-10)
    grad = optimize.approx_fprime(fit.coef, lambda b: _penalised(X, y, b), 1e-6)
    assert np.abs(grad).max() < 1e-4
    # the surface is flat along the separating direction (coefficient ~21): the two
    # optimisers stop a few 1e-4 apart there, which BLAS differences between machines move
    assert fit.coef == pytest.approx(ref.x, rel=1e-4, abs=1e-4)


def test_firth_restricted_fit_and_penalised_lr() -> None:
    """The restricted fit (coefficient fixed at 0 under the full penalty) maximises the
    full model's penalised likelihood over the free coefficients only."""
    X = np.array([[1.0, 0.0], [1.0, 1.0]])
    s, n = np.array([3.0, 10.0]), np.array([10.0, 10.0])
    full = firth_logistic(X, s, n)
    restricted = firth_logistic(X, s, n, free=[0])
    assert restricted.coef[1] == 0.0

    def pen(b0: float) -> float:
        mu = expit(X @ np.array([b0, 0.0]))
        w = n * mu * (1 - mu)
        ll = np.sum(s * np.log(mu) + (n - s) * np.log1p(-mu))
        return float(ll + 0.5 * np.linalg.slogdet(X.T @ (X * w[:, None]))[1])

    ref = optimize.minimize_scalar(lambda b: -pen(b), bounds=(-5, 5), method="bounded",
                                   options={"xatol": 1e-10})
    assert restricted.coef[0] == pytest.approx(ref.x, abs=1e-5)
    assert 2 * (full.penalized_loglik - restricted.penalized_loglik) > 10


def test_separation_lp() -> None:
    X = np.array([[1.0, 0.0], [1.0, 1.0]])
    assert separated_rows(X, [3, 10], [10, 10]).tolist() == [False, True]
    assert separated_rows(X, [3, 7], [10, 10]).tolist() == [False, False]
    assert separated_rows(X, [0, 10], [10, 10]).tolist() == [True, True]
    # a row with successes and failures pins x d = 0: overlap means no separation
    Xc = np.column_stack([np.ones(6), [1, 2, 3, 4, 5, 6.0]])
    assert not separated_rows(Xc, [0, 0, 1, 0, 1, 1]).any()
    assert separated_rows(Xc, [0, 0, 0, 1, 1, 1]).all()


@pytest.mark.slow
def test_binomial_glmm_recovers_simulated_variance_components() -> None:
    """Simulated with known truth (no published data set): logit y = 0.3 + 0.5 x + u_item
    + v_seed, var(u) = 1.0 over 80 items, var(v) = 0.5 over 8 seeds; the variational
    fit recovers the realised variances of the drawn effects (item: +-35%; seed, from 8
    draws: a factor 3) and the fixed slope."""
    rng = np.random.default_rng(3)
    G, S = 80, 8
    item = np.repeat(np.arange(G), S * 2)
    seed = np.tile(np.repeat(np.arange(S), 2), G)
    x = np.tile([-1.0, 1.0], G * S)
    u, v = rng.normal(0, 1.0, G), rng.normal(0, math.sqrt(0.5), S)
    y = (rng.random(len(x)) < expit(0.3 + 0.5 * x + u[item] + v[seed])).astype(float)
    out = binomial_glmm(y, np.column_stack([np.ones_like(x), x]), {"item": item, "seed": seed})
    item_var, seed_var = float(u.var(ddof=1)), float(v.var(ddof=1))
    assert 0.65 * item_var < out["variances"]["item"] < 1.35 * item_var
    assert seed_var / 3 < out["variances"]["seed"] < seed_var * 3
    assert out["coef"][1] == pytest.approx(0.5, abs=0.15)


def test_item_bootstrap_is_paired_and_vectorised() -> None:
    rng = np.random.default_rng(0)
    base = rng.normal(size=(200, 1))
    data = np.hstack([base, base + 0.1])  # b - a = 0.1 on every item: no paired noise
    boot = item_bootstrap(data, lambda m: m[..., 1] - m[..., 0], n_boot=300)
    assert boot.observed == pytest.approx(0.1) and boot.lo == pytest.approx(0.1)
    assert boot.hi == pytest.approx(0.1) and boot.se == pytest.approx(0.0, abs=1e-12)
    mean = item_bootstrap(base, lambda m: m[..., 0], n_boot=2000)
    assert float(mean.se) == pytest.approx(float(base.std(ddof=1)) / math.sqrt(200), rel=0.1)


def test_score_mean_ci_picks_wilson_for_proportions_only() -> None:
    from harness.stats import is_proportion_score, mean_ci, score_mean_ci

    assert is_proportion_score([0.0, 1.0, 1.0]) and not is_proportion_score([0.0, 0.0])
    assert not is_proportion_score([0.0, 0.5, 1.0])
    ones = score_mean_ci([1.0] * 5, cluster=list(range(5)), binary=True)
    assert ones.hi == 1.0 and ones.lo == pytest.approx(5 / (5 + 1.959963984540054**2))
    gap = score_mean_ci([0.2, 0.4, 0.9], bounds=(0.0, 1.0), binary=False)
    assert (gap.lo, gap.hi) == (mean_ci([0.2, 0.4, 0.9], bounds=(0.0, 1.0)).lo,
                                mean_ci([0.2, 0.4, 0.9], bounds=(0.0, 1.0)).hi)
