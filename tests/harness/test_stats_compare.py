"""The statistics ``harness compare`` adds to harness.stats: exact McNemar, its interval,
and the bootstrap p-value that agrees with the bootstrap interval."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest

from harness.stats import bootstrap_ci, bootstrap_mean_p, mcnemar_exact_ci, mcnemar_exact_p


def test_mcnemar_p_is_the_exact_binomial_test_of_the_discordant_pairs() -> None:
    for up in range(0, 15):
        for down in range(0, 15):
            expected = binomtest(up, up + down, 0.5).pvalue if up + down else 1.0
            assert mcnemar_exact_p(up, down) == pytest.approx(expected, rel=1e-12)


def test_the_exact_interval_excludes_zero_exactly_when_the_test_rejects() -> None:
    n = 40
    for up in range(0, 20):
        for down in range(0, 20):
            ci = mcnemar_exact_ci(up, down, n)
            assert ci.lo <= (up - down) / n <= ci.hi
            excludes = ci.lo > 0 or ci.hi < 0
            assert excludes == (mcnemar_exact_p(up, down) < 0.05), (up, down)


def test_no_discordant_pair_still_has_an_interval() -> None:
    ci = mcnemar_exact_ci(0, 0, 20)
    assert ci.estimate == 0.0 and ci.lo == -ci.hi
    assert ci.hi == pytest.approx(1 - 0.025 ** (1 / 20))  # Clopper-Pearson upper of 0/20


def test_bootstrap_p_agrees_with_the_bootstrap_interval() -> None:
    rng = np.random.default_rng(1)
    for shift in (0.0, 0.05, 0.5):
        x = rng.normal(shift, 1.0, 60)
        cluster = np.repeat(np.arange(30), 2)
        est, p = bootstrap_mean_p(x, cluster=cluster, seed=3)
        assert est == bootstrap_ci(x, cluster=cluster, seed=3)  # the same resamples
        if p < 0.04:
            assert est.lo > 0 or est.hi < 0
        if p > 0.06:
            assert est.lo < 0 < est.hi
    assert bootstrap_mean_p(np.zeros(5))[1] == 1.0
