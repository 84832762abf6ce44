"""harness.stats against hand arithmetic, scipy/statsmodels, and hypothesis properties."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestPower
from statsmodels.stats.proportion import proportion_confint

from harness.stats import (
    bootstrap_ci,
    clopper_pearson_ci,
    clustered_se,
    critical_value,
    fit_logistic,
    holm_adjust,
    items_needed,
    kendall_tau,
    kendall_w,
    mean_ci,
    minimum_detectable_difference,
    paired_difference,
    paired_difference_ci,
    paired_t_p_value,
    two_sided_p,
    wilson_ci,
)

# --------------------------------------------------------------------------- mean_ci


def test_mean_ci_unclustered_by_hand() -> None:
    # x = 1..6: mean 3.5, residuals +-0.5, +-1.5, +-2.5, sum of squares 17.5,
    # s^2 = 17.5 / 5 = 3.5, se = sqrt(3.5 / 6)
    est = mean_ci([1, 2, 3, 4, 5, 6])
    se = math.sqrt(3.5 / 6)
    half = sps.t.ppf(0.975, 5) * se
    assert (est.estimate, est.n, est.n_clusters, est.level) == (3.5, 6, None, 0.95)
    assert (est.se, est.lo, est.hi) == pytest.approx((se, 3.5 - half, 3.5 + half))


def test_mean_ci_clustered_by_hand() -> None:
    # clusters {1,2}, {3,4}, {5,6}: residual sums -4, 0, 4 -> sum of squares 32;
    # SE^2 = G/(G-1) * 32 / n^2 = 3/2 * 32/36 = 4/3; t interval with G - 1 = 2 df
    est = mean_ci([1, 2, 3, 4, 5, 6], cluster=["a", "a", "b", "b", "c", "c"])
    se = math.sqrt(4 / 3)
    assert est.se == pytest.approx(se)
    assert est.n == 6 and est.n_clusters == 3
    half = 4.302652729911275 * se  # t_{0.975, 2}
    assert (est.lo, est.hi) == (pytest.approx(3.5 - half), pytest.approx(3.5 + half))


def test_clustered_se_matches_statsmodels_cluster_robust_ols() -> None:
    rng = np.random.default_rng(1)
    groups = np.repeat(np.arange(30), rng.integers(1, 6, size=30))
    x = rng.normal(size=groups.size) + rng.normal(size=30)[groups]
    fit = sm.OLS(x, np.ones_like(x)).fit(cov_type="cluster", cov_kwds={"groups": groups})
    se, g = clustered_se(x, groups)
    assert g == 30
    assert se == pytest.approx(float(fit.bse[0]), rel=1e-10)


def test_clustering_widens_interval_for_correlated_epochs() -> None:
    # each item scored 5 times identically: 5 epochs carry the information of one
    items = np.array([0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0])
    x, ids = np.repeat(items, 5), np.repeat(np.arange(8), 5)
    clustered, naive = mean_ci(x, cluster=ids), mean_ci(x)
    assert clustered.se > 2 * naive.se
    assert clustered.se == pytest.approx(math.sqrt(8 / 7 * np.sum((items - 0.625) ** 2) / 64))


def test_inputs_accept_polars_and_reject_missing() -> None:
    assert mean_ci(pl.Series([1.0, 2.0, 4.0])).estimate == pytest.approx(7 / 3)
    with pytest.raises(ValueError, match="null"):
        mean_ci(pl.Series([1.0, None, 4.0]))
    with pytest.raises(ValueError, match="NaN"):
        mean_ci([1.0, float("nan")])
    with pytest.raises(ValueError, match="labels"):
        mean_ci([1.0, 2.0], cluster=[1])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-100, 100), min_size=2, max_size=40),
       st.floats(0.5, 0.99))
def test_mean_ci_contains_estimate_and_shrinks_with_n(values: list[float], level: float) -> None:
    est = mean_ci(values, level=level)
    assert est.lo <= est.estimate <= est.hi
    if est.se > 1e-9:
        bigger = mean_ci(values * 4, level=level)
        assert bigger.width < est.width


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-10, 10), min_size=2, max_size=30))
def test_singleton_clusters_equal_unclustered(values: list[float]) -> None:
    clustered = mean_ci(values, cluster=list(range(len(values))))
    naive = mean_ci(values)
    assert clustered.se == pytest.approx(naive.se, rel=1e-9, abs=1e-12)


# --------------------------------------------------------------------------- bootstrap


def test_bootstrap_constant_and_reproducible() -> None:
    est = bootstrap_ci([2.0] * 10)
    assert (est.estimate, est.lo, est.hi, est.se) == (2.0, 2.0, 2.0, 0.0)
    x = np.random.default_rng(0).normal(size=50)
    assert bootstrap_ci(x, seed=3) == bootstrap_ci(x, seed=3)
    assert bootstrap_ci(x, seed=3) != bootstrap_ci(x, seed=4)


def test_bootstrap_close_to_t_interval_for_normal_data() -> None:
    x = np.random.default_rng(7).normal(10.0, 2.0, size=400)
    boot, t = bootstrap_ci(x, n_boot=4000), mean_ci(x)
    assert boot.lo == pytest.approx(t.lo, abs=0.05) and boot.hi == pytest.approx(t.hi, abs=0.05)
    assert boot.se == pytest.approx(t.se, rel=0.1)


def test_statistic_without_axis_gives_same_draws_as_vectorised() -> None:
    x = np.random.default_rng(2).exponential(size=30)
    vectorised = bootstrap_ci(x, statistic=np.median, n_boot=300)
    looped = bootstrap_ci(x, statistic=lambda v: float(np.median(v)), n_boot=300)
    assert vectorised == looped


@pytest.mark.parametrize("statistic", [np.mean, np.median])
def test_cluster_bootstrap_of_duplicated_items_equals_item_bootstrap(statistic: object) -> None:
    # each item duplicated 3 times, clustered by item: resampling clusters draws the same
    # index matrix as resampling items, and duplication changes neither mean nor median
    x = np.random.default_rng(5).normal(size=25)
    plain = bootstrap_ci(x, statistic=statistic, n_boot=500)  # type: ignore[arg-type]
    clustered = bootstrap_ci(np.repeat(x, 3), statistic=statistic,  # type: ignore[arg-type]
                             n_boot=500, cluster=np.repeat(np.arange(25), 3))
    assert clustered.n_clusters == 25 and clustered.n == 75
    assert (clustered.lo, clustered.hi) == (pytest.approx(plain.lo), pytest.approx(plain.hi))


# --------------------------------------------------------------------------- paired


def test_paired_difference_ci_is_mean_ci_of_differences() -> None:
    a, b = [0.9, 0.8, 0.7, 0.4], [0.5, 0.6, 0.6, 0.1]
    # differences 0.4, 0.2, 0.1, 0.3: mean 0.25, s^2 = (0.0225+0.0025+0.0225+0.0025)/3
    est = paired_difference_ci(a, b)
    assert est.estimate == pytest.approx(0.25)
    assert est.se == pytest.approx(math.sqrt(0.05 / 3 / 4))
    with pytest.raises(ValueError, match="align"):
        paired_difference_ci([1.0, 2.0], [1.0])


def test_paired_difference_frame_aligns_averages_epochs_and_reports_unmatched() -> None:
    df = pl.DataFrame({
        "model": ["A", "A", "A", "A", "A", "B", "B", "B", "B"],
        "sample_id": ["1", "1", "2", "3", "9", "1", "2", "3", "7"],
        "score_value": [1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0],
    })
    est, unmatched = paired_difference(df, by="model", value="score_value", item="sample_id")
    # item 1: A averages epochs (1+0)/2 = 0.5, B 0 -> 0.5; item 2: 1 - 0 = 1; item 3: 0
    assert est.n == 3
    assert est.estimate == pytest.approx(0.5)
    assert est.se == pytest.approx(math.sqrt(0.25 / 3))
    assert sorted(unmatched.rows()) == [("7", "B"), ("9", "A")]
    with pytest.raises(ValueError, match="levels"):
        paired_difference(df.with_columns(pl.lit("C").alias("model")).vstack(df),
                          by="model", value="score_value", item="sample_id")


# --------------------------------------------------------------------------- proportions


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (10, 10), (47, 120), (1, 1)])
@pytest.mark.parametrize("level", [0.9, 0.95])
def test_proportion_intervals_match_statsmodels(k: int, n: int, level: float) -> None:
    lo, hi = proportion_confint(k, n, alpha=1 - level, method="wilson")
    est = wilson_ci(k, n, level)
    assert (est.lo, est.hi) == (pytest.approx(lo), pytest.approx(hi))
    lo, hi = proportion_confint(k, n, alpha=1 - level, method="beta")
    est = clopper_pearson_ci(k, n, level)
    assert (est.lo, est.hi) == (pytest.approx(lo), pytest.approx(hi))


def test_wilson_by_hand() -> None:
    # 3/10 at z = 1.959964: centre (0.3 + z^2/20) / (1 + z^2/10)
    z = 1.959963984540054
    centre = (0.3 + z * z / 20) / (1 + z * z / 10)
    half = z * math.sqrt(0.3 * 0.7 / 10 + z * z / 400) / (1 + z * z / 10)
    est = wilson_ci(3, 10)
    assert (est.lo, est.hi) == (pytest.approx(centre - half), pytest.approx(centre + half))
    with pytest.raises(ValueError):
        wilson_ci(11, 10)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_proportion_intervals_in_unit_interval(kn: tuple[int, int]) -> None:
    k, n = kn
    for est in (wilson_ci(k, n), clopper_pearson_ci(k, n)):
        assert 0.0 <= est.lo <= est.estimate <= est.hi <= 1.0


# --------------------------------------------------------------------------- holm


def test_holm_by_hand_and_against_statsmodels() -> None:
    p = [0.01, 0.04, 0.03, 0.005]
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 -> 0.02, 0.03, 0.06, 0.04 -> cummax
    assert holm_adjust(p) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    rng = np.random.default_rng(4)
    q = rng.uniform(0, 0.2, size=25)
    assert holm_adjust(q) == pytest.approx(multipletests(q, method="holm")[1])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=30))
def test_holm_properties(p: list[float]) -> None:
    adj = holm_adjust(p)
    raw = np.asarray(p)
    assert np.all(adj >= raw - 1e-15) and np.all(adj <= 1.0)
    order = np.argsort(raw, kind="stable")
    assert np.all(np.diff(adj[order]) >= -1e-15)


# --------------------------------------------------------------------------- agreement


def test_kendall_w_by_hand() -> None:
    # rank sums 4, 6, 8, 12 around 7.5: S = 35; W = 12 * 35 / (3^2 * (4^3 - 4)) = 7/9
    assert kendall_w([[1, 2, 3, 4], [2, 1, 3, 4], [1, 3, 2, 4]]) == pytest.approx(7 / 9)
    # first rater ties items 1 and 2: ranks 1.5, 1.5, 3, 4, T = 2^3 - 2 = 6;
    # rank sums 4.5, 5.5, 8, 12: S = 33.5; W = 12 * 33.5 / (9 * 60 - 3 * 6)
    assert kendall_w([[1, 1, 2, 3], [2, 1, 3, 4], [1, 3, 2, 4]]) == pytest.approx(402 / 522)
    assert kendall_w([[1, 2, 3], [3, 2, 1]]) == pytest.approx(0.0)


def test_kendall_w_matches_friedman_statistic() -> None:
    # Friedman's chi^2 (tie-corrected) = m (n - 1) W
    data = np.random.default_rng(8).integers(0, 5, size=(6, 9)).astype(float)
    chi2 = sps.friedmanchisquare(*data.T).statistic
    assert kendall_w(data) == pytest.approx(chi2 / (6 * 8))


def test_kendall_tau_by_hand_and_against_scipy() -> None:
    # pairs of (1,2,3,4) vs (1,3,2,4): 5 concordant, 1 discordant of 6 -> 4/6
    assert kendall_tau([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(4 / 6)
    rng = np.random.default_rng(9)
    a, b = rng.integers(0, 6, size=300), rng.integers(0, 6, size=300)  # many ties
    assert kendall_tau(a, b) == pytest.approx(sps.kendalltau(a, b).statistic)
    a2 = rng.normal(size=2500)  # several row blocks
    b2 = a2 + rng.normal(size=2500)
    assert kendall_tau(a2, b2) == pytest.approx(sps.kendalltau(a2, b2).statistic)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=3, max_size=25))
def test_agreement_bounds(pairs: list[tuple[int, int]]) -> None:
    a, b = zip(*pairs, strict=True)
    tau = kendall_tau(a, b)
    if not math.isnan(tau):
        assert -1 - 1e-12 <= tau <= 1 + 1e-12
        assert tau == pytest.approx(kendall_tau(b, a))
    w = kendall_w([a, b])
    if not math.isnan(w):
        assert -1e-12 <= w <= 1 + 1e-12


# --------------------------------------------------------------------------- power


@pytest.mark.parametrize(("diff", "sd", "two_sided"),
                         [(0.1, 0.5, True), (1.0, 1.0, True), (0.1, 0.5, False), (0.05, 0.4, True)])
def test_items_needed_matches_statsmodels(diff: float, sd: float, two_sided: bool) -> None:
    alternative = "two-sided" if two_sided else "larger"
    exact = TTestPower().solve_power(effect_size=diff / sd, alpha=0.05, power=0.8,
                                     alternative=alternative)
    assert items_needed(diff, sd, two_sided=two_sided) == math.ceil(exact)
    assert items_needed(-diff, sd, two_sided=two_sided) == math.ceil(exact)


def test_items_needed_normal_approximation_by_hand() -> None:
    # ((1.959964 + 0.841621) * 0.5 / 0.1)^2 = 196.2 -> the t-test needs a little more
    approx = ((1.959963984540054 + 0.8416212335729143) * 0.5 / 0.1) ** 2
    assert approx == pytest.approx(196.22, abs=0.01)
    assert math.ceil(approx) <= items_needed(0.1, 0.5) <= math.ceil(approx) + 3


@pytest.mark.parametrize(("n", "two_sided"), [(10, True), (199, True), (10, False), (1000, True)])
def test_minimum_detectable_difference_inverts_items_needed(n: int, two_sided: bool) -> None:
    alternative = "two-sided" if two_sided else "larger"
    effect = TTestPower().solve_power(nobs=n, alpha=0.05, power=0.8, alternative=alternative)
    mdd = minimum_detectable_difference(n, 0.5, two_sided=two_sided)
    assert mdd == pytest.approx(effect * 0.5, rel=1e-4)
    assert items_needed(mdd * 1.001, 0.5, two_sided=two_sided) <= n


def test_mean_ci_bounds_clip_only_the_interval() -> None:
    from harness.stats import mean_ci

    values = [0.0] * 19 + [1.0]
    free = mean_ci(values)
    clipped = mean_ci(values, bounds=(0.0, 1.0))
    assert free.lo < 0.0  # the t interval crosses the impossible side here
    assert clipped.lo == 0.0 and clipped.hi == free.hi
    assert clipped.estimate == free.estimate and clipped.se == free.se


# --------------------------------------------------------------------------- rank intervals


def test_rank_interval_observed_ranks_and_ties_by_hand() -> None:
    from harness.stats import bootstrap_rank_interval

    # means 0.5, 1.0, 0.5, 0.0 -> competition ranks 2, 1, 2, 4
    matrix = np.array([[1.0, 1.0, 0.0, 0.0], [0.0, 1.0, 1.0, 0.0]])
    out = bootstrap_rank_interval(matrix, n_boot=200)
    assert out.rank.tolist() == [2, 1, 2, 4]
    assert (out.lo <= out.rank).all() and (out.rank <= out.hi).all()
    # system 1 scores 1 on every item: no resample moves it; system 3 scores 0 on every
    # item but ties (shares rank 3) whenever a resample gives systems 0 or 2 only zeros
    assert (out.lo[1], out.hi[1]) == (1, 1) and (out.lo[3], out.hi[3]) == (3, 4)
    low = bootstrap_rank_interval(matrix, n_boot=200, higher_is_better=False)
    assert low.rank.tolist() == [2, 4, 2, 1]


def test_rank_interval_separates_clear_gaps_and_overlaps_close_systems() -> None:
    from harness.stats import bootstrap_rank_interval, paired_difference_ci

    rng = np.random.default_rng(3)
    base = rng.normal(0.5, 0.2, size=200)
    close_a = base + rng.normal(0.0, 0.1, size=200)
    close_b = base + 0.005 + rng.normal(0.0, 0.1, size=200)
    far = base + 1.0
    diff = paired_difference_ci(close_b, close_a)
    assert diff.lo < 0.0 < diff.hi  # not distinguishable
    out = bootstrap_rank_interval(np.column_stack([close_a, close_b, far]), n_boot=500)
    assert (out.lo[2], out.hi[2]) == (1, 1)
    assert out.lo[0] == out.lo[1] == 2 and out.hi[0] == out.hi[1] == 3  # shared interval


def test_rank_interval_handles_missing_items_and_is_reproducible() -> None:
    from harness.stats import bootstrap_rank_interval

    matrix = np.array([[1.0, np.nan], [0.0, 1.0], [1.0, 1.0], [np.nan, 0.0]])
    a = bootstrap_rank_interval(matrix, n_boot=300, seed=7, chunk=17)
    b = bootstrap_rank_interval(matrix, n_boot=300, seed=7, chunk=300)
    assert a.lo.tolist() == b.lo.tolist() and a.hi.tolist() == b.hi.tolist()
    assert a.rank.tolist() == [1, 1]  # 2/3 each over the items they have
    with pytest.raises(ValueError):
        bootstrap_rank_interval(np.array([[np.nan, 1.0]]))


# --------------------------------------------------------------------------- t, normal, tests


def test_critical_value_is_t_or_normal_quantile() -> None:
    assert critical_value(10, 0.95) == pytest.approx(sps.t.ppf(0.975, 10), rel=1e-15)
    assert critical_value(math.inf, 0.95) == pytest.approx(1.959963984540054, rel=1e-15)
    assert critical_value(math.inf, 0.90) == pytest.approx(sps.norm.ppf(0.95), rel=1e-15)


def test_two_sided_p_matches_scipy_and_keeps_nan() -> None:
    stat = np.array([-2.5, 0.0, 1.3, np.nan])
    p = two_sided_p(stat, 7)
    np.testing.assert_allclose(p[:3], 2 * sps.t.sf(np.abs(stat[:3]), 7), rtol=1e-15)
    assert math.isnan(p[3])
    assert float(two_sided_p(1.959963984540054, math.inf)) == pytest.approx(0.05, rel=1e-12)


def test_paired_t_p_value_matches_scipy_ttest_rel() -> None:
    rng = np.random.default_rng(5)
    a = rng.normal(0.6, 0.2, size=15)
    b = a - rng.normal(0.05, 0.1, size=15)
    est = paired_difference_ci(a, b)
    assert paired_t_p_value(est) == pytest.approx(sps.ttest_rel(a, b).pvalue, rel=1e-12)
    assert math.isnan(paired_t_p_value(paired_difference_ci([1.0, 2.0], [1.0, 2.0])))


# --------------------------------------------------------------------------- regression


def _logit_data() -> tuple[np.ndarray, np.ndarray]:
    x = np.array([5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20], dtype=float)
    y = np.array([1, 1, 1, 0, 1, 1, 0, 1, 0, 1, 0, 0, 1, 0, 0, 0], dtype=float)
    return x, y


def test_fit_logistic_matches_statsmodels_logit() -> None:
    x, y = _logit_data()
    ref = sm.Logit(y, sm.add_constant(x)).fit(disp=0).params
    a, b = fit_logistic(x, y, ridge=0.0)  # the unpenalised fit is the MLE
    assert (a, b) == pytest.approx((ref[0], ref[1]), rel=1e-8)
    a, b = fit_logistic(x, y)  # the default ridge moves it negligibly away from separation
    assert (a, b) == pytest.approx((ref[0], ref[1]), rel=1e-3)


def test_fit_logistic_stays_finite_under_separation() -> None:
    x = np.arange(10, dtype=float)
    a, b = fit_logistic(x, (x < 5).astype(float))
    assert math.isfinite(a) and math.isfinite(b) and b < 0
    assert -a / b == pytest.approx(4.5, abs=1e-6)  # the boundary sits between the groups
