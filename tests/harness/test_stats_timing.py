"""harness.stats' paired-timing tests (FormulaCode's per-workload significance): the t test
on log-ratios, the sign-flip permutation test, Mann-Whitney U and the joint row bootstrap."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from harness import stats

D = [0.11, 0.09, 0.12, 0.10, 0.08, 0.13, 0.1]


def test_one_sample_t_p_is_scipys_t_test_and_decides_degenerate_cases() -> None:
    assert stats.one_sample_t_p(D) == pytest.approx(sps.ttest_1samp(D, 0.0).pvalue, rel=1e-12)
    noise = [0.01, -0.012, 0.008, -0.009, 0.011, -0.01]
    assert stats.one_sample_t_p(noise) == pytest.approx(sps.ttest_1samp(noise, 0.0).pvalue)
    assert stats.one_sample_t_p([0.3]) == 1.0 and stats.one_sample_t_p([]) == 1.0
    assert stats.one_sample_t_p([0.2, 0.2, 0.2]) == 0.0  # every round agrees exactly
    assert stats.one_sample_t_p([0.0, 0.0]) == 1.0


def test_sign_flip_p_exact_and_monte_carlo() -> None:
    assert stats.sign_flip_p([0.1] * 5) == pytest.approx(2 / 32)  # 5 rounds never reach 0.05
    assert stats.sign_flip_p([0.1] * 6) == pytest.approx(2 / 64)
    assert stats.sign_flip_p([]) == 1.0
    # a symmetric sample: about half the sign patterns are as extreme
    assert stats.sign_flip_p([0.1, -0.1, 0.2, -0.2]) == 1.0
    many = list(np.random.default_rng(0).normal(0.05, 0.01, size=20))
    p = stats.sign_flip_p(many, exact_max=16, draws=5000, seed=3)
    assert p < 0.01 and p == stats.sign_flip_p(many, exact_max=16, draws=5000, seed=3)


def test_mann_whitney_p_matches_scipy() -> None:
    x, y = [1.0, 1.1, 1.2, 1.05, 1.15], [2.0, 2.1, 2.2, 2.05, 2.15]
    expected = sps.mannwhitneyu(x, y, alternative="two-sided").pvalue
    assert stats.mann_whitney_p(x, y) == pytest.approx(expected) and expected < 0.05
    assert stats.mann_whitney_p([1.0, 1.0], [1.0, 1.0]) == 1.0
    assert stats.mann_whitney_p([], [1.0]) == 1.0


def test_bootstrap_rows_ci_resamples_rows_jointly_and_drops_nonfinite() -> None:
    a = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    b = a * 2
    seen: list[np.ndarray] = []

    def ratio(idx: np.ndarray) -> np.ndarray:
        seen.append(idx)
        return b[idx].mean(axis=1) / a[idx].mean(axis=1)

    def mean_a(idx: np.ndarray) -> np.ndarray:
        seen.append(idx)
        return a[idx].mean(axis=1)

    cis = stats.bootstrap_rows_ci(5, {"ratio": ratio, "mean": mean_a}, n_boot=400, seed=1)
    assert seen[0] is seen[1]  # both statistics saw the same resampled rows
    assert cis["ratio"] == pytest.approx((2.0, 2.0))  # b/a is 2 in every replicate
    idx = np.random.default_rng(1).integers(0, 5, size=(400, 5))
    means = a[idx].mean(axis=1)
    assert cis["mean"] == pytest.approx((np.percentile(means, 2.5), np.percentile(means, 97.5)))

    def sometimes_nan(idx: np.ndarray) -> np.ndarray:
        out = a[idx].mean(axis=1)
        out[::2] = math.nan
        return out

    kept = stats.bootstrap_rows_ci(5, {"m": sometimes_nan}, n_boot=400, seed=1)["m"]
    assert kept == pytest.approx((np.percentile(means[1::2], 2.5),
                                  np.percentile(means[1::2], 97.5)))
    none = stats.bootstrap_rows_ci(5, {"m": lambda i: np.full(len(i), math.nan)}, n_boot=10)
    assert all(math.isnan(v) for v in none["m"])
    with pytest.raises(ValueError):
        stats.bootstrap_rows_ci(0, {"m": mean_a})


def test_one_sample_t_p_array_matches_the_scalar_test_and_skips_nan() -> None:
    rng = np.random.default_rng(0)
    rows = [rng.normal(0.01, 0.02, size=n) for n in (1, 2, 3, 5, 8) for _ in range(20)]
    rows += [np.zeros(4), np.full(4, 0.5)]  # the degenerate cases decide
    for row in rows:
        assert float(stats.one_sample_t_p_array(row)) == pytest.approx(
            stats.one_sample_t_p(list(row)), abs=1e-12)
    with_gap = np.array([0.1, np.nan, 0.12, 0.09])
    assert float(stats.one_sample_t_p_array(with_gap)) == pytest.approx(
        stats.one_sample_t_p([0.1, 0.12, 0.09]))
    block = rng.normal(size=(3, 5, 4))
    out = stats.one_sample_t_p_array(block, axis=1)
    assert out.shape == (3, 4)
    assert out[1, 2] == pytest.approx(stats.one_sample_t_p(list(block[1, :, 2])))
