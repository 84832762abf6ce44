"""The factorial analysis at the edges (issue 18): 0/1 scores with separation, 20 items,
aliasing, effect-size labels, bootstrap robustness, a binomial GLMM.

The coverage check simulates with known truth (no published reference): a logit model
with random item intercepts, an agent that is nearly always right (its cells are all-1,
i.e. separated, in most studies), 20 items x 2 epochs; the truth is the item-population
mean of each cell (Gauss-Hermite quadrature over the item effect).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy.special import expit

from harness.factorial.analysis import analyze
from harness.stats import binary_mean_ci

GH_X, GH_W = np.polynomial.hermite_e.hermegauss(60)
GH_W = GH_W / GH_W.sum()
LOGITS = {("strong", "p"): 4.5, ("strong", "q"): 4.5, ("weak", "p"): -0.5, ("weak", "q"): 0.3}
SD, ITEMS, EPOCHS = 1.0, 20, 2


def _truth(a: float) -> float:
    return float(np.sum(GH_W * expit(a + SD * GH_X)))


def _study(rng: np.random.Generator) -> pl.DataFrame:
    u = rng.normal(0, SD, ITEMS)
    parts = []
    for (agent, prompt), a in LOGITS.items():
        y = (rng.random((EPOCHS, ITEMS)) < expit(a + u)).astype(float)
        parts.append(pl.DataFrame({
            "agent": agent, "prompt": prompt,
            "item": [f"i{i}" for i in range(ITEMS)] * EPOCHS, "y": y.ravel(),
        }))
    return pl.concat(parts)


@pytest.mark.slow
def test_intervals_cover_at_about_the_nominal_rate_under_separation() -> None:
    truth = {k: _truth(a) for k, a in LOGITS.items()}
    rng = np.random.default_rng(1)
    cells, emms, separated = [], [], 0
    for _ in range(200):
        df = _study(rng)
        for (agent, prompt), value in truth.items():
            sub = df.filter((pl.col("agent") == agent) & (pl.col("prompt") == prompt))
            est = binary_mean_ci(sub["y"], cluster=sub["item"])
            assert 0.0 <= est.lo < est.hi <= 1.0
            cells.append(est.lo <= value <= est.hi)
        result = analyze(df, "y", ["agent", "prompt"], item="item", family="binomial",
                         item_mode="cluster")
        separated += result.model["estimation"] == "firth"
        means = result.marginal_means.filter(pl.col("term") == "prompt")
        for level, lo, hi in means.select("level", "lo", "hi").rows():
            target = (truth[("strong", level)] + truth[("weak", level)]) / 2
            assert 0.0 <= lo < hi <= 1.0
            emms.append(lo <= target <= hi)
    assert separated > 100  # the edge this test is about: most studies are separated
    assert 0.92 <= np.mean(cells) <= 0.99
    assert 0.92 <= np.mean(emms) <= 0.995


def _demo_like() -> pl.DataFrame:
    """The shape of the committed example: an always-right oracle, a 0.65 agent that
    ignores the setup, a weak model; 20 items."""
    rows = []
    weak = {("none", "plain"): {3, 7}, ("none", "instructive"): {1, 4, 9},
            ("distractor", "plain"): {5}, ("distractor", "instructive"): set()}
    for inter in ("none", "distractor"):
        for style in ("plain", "instructive"):
            for i in range(20):
                base = {"intervention": inter, "prompt_style": style, "sample_id": f"i{i}"}
                rows += [{**base, "model": "oracle", "y": 1.0},
                         {**base, "model": "left_to_right", "y": float(i < 13)},
                         {**base, "model": "smollm2", "y": float(i in weak[(inter, style)])}]
    return pl.DataFrame(rows)


def test_marginal_means_agree_with_raw_marginals_under_separation() -> None:
    df = _demo_like()
    result = analyze(df, "y", ["intervention", "model", "prompt_style"], item="sample_id",
                     family="binomial", item_mode="cluster")
    assert result.model["estimation"] == "firth"
    assert result.model["separation"]["cells"] and result.model["separation"]["action"]
    for factor in ("intervention", "model", "prompt_style"):
        raw = df.group_by(factor).agg(pl.col("y"), pl.col("sample_id"))
        emm = result.marginal_means.filter(pl.col("term") == factor)
        for level, ys, ids in raw.rows():
            r = binary_mean_ci(ys, cluster=ids)
            e = emm.filter(pl.col("level") == level).row(0, named=True)
            assert 0.0 <= e["lo"] < e["hi"] <= 1.0
            assert r.lo <= e["estimate"] <= r.hi  # the EMM lies in the raw CI
            assert e["lo"] <= r.estimate + 0.02 and r.estimate <= e["hi"] + 0.02
    none = result.marginal_means.filter((pl.col("term") == "intervention")
                                        & (pl.col("level") == "none")).row(0, named=True)
    assert none["estimate"] == pytest.approx(df.filter(pl.col("intervention") == "none")
                                             ["y"].mean(), abs=0.03)
    assert none["se"] < 0.1  # not the logit-scale 21.8 of an averaged separated logit


def test_aliased_terms_are_one_chain() -> None:
    """A 2^(3-1) resolution-III fraction (C = AB): with order 2, A:B is C, so it is fitted
    once and named ``C = A:B``; asking for two interactions aliased with main effects
    gives chains, never two estimates."""
    rng = np.random.default_rng(0)
    runs = [(-1, -1, 1), (1, -1, -1), (-1, 1, -1), (1, 1, 1)]
    rows = []
    for a, b, c in runs:
        for i in range(10):
            rows.append({"A": str(a), "B": str(b), "C": str(c), "item": f"i{i}",
                         "y": 1.0 * a + 0.5 * c + rng.normal()})
    result = analyze(pl.DataFrame(rows), "y", ["A", "B", "C"], item="item", order=2)
    terms = result.anova.get_column("term").to_list()
    assert "C = A:B" in terms and "A = B:C" in terms and "B = A:C" in terms
    assert not any(t in terms for t in ("A:B", "A:C", "B:C"))
    assert sorted(result.model["aliases"]) == ["A = B:C", "B = A:C", "C = A:B"]


def test_unestimable_model_names_the_chain() -> None:
    rows = [{"A": a, "B": b, "y": float(i), "item": str(i)}
            for i, (a, b) in enumerate([("x", "u"), ("x", "v"), ("y", "u")] * 3)]
    with pytest.raises(ValueError, match="not estimable: A:B is"):
        analyze(pl.DataFrame(rows), "y", ["A", "B"], order=2)


def test_effect_sizes_are_named() -> None:
    rng = np.random.default_rng(2)
    rows = [{"A": a, "B": b, "y": (a == "1") * 1.0 + rng.normal()}
            for a in ("0", "1") for b in ("0", "1") for _ in range(10)]
    anova = analyze(pl.DataFrame(rows), "y", ["A", "B"], order=2).anova
    a = anova.filter(pl.col("term") == "A").row(0, named=True)
    total = float(anova.get_column("sum_sq").sum())
    resid = anova.filter(pl.col("term") == "Residual").row(0, named=True)
    mse = resid["sum_sq"] / resid["df"]
    assert a["eta2"] == pytest.approx(a["sum_sq"] / total)
    assert a["partial_eta2"] == pytest.approx(a["sum_sq"] / (a["sum_sq"] + resid["sum_sq"]))
    assert a["omega2"] == pytest.approx((a["sum_sq"] - mse) / (total + mse))
    assert a["partial_omega2"] == pytest.approx((a["sum_sq"] - mse)
                                                / (a["sum_sq"] + (40 - 1) * mse))
    binom = analyze(_demo_like(), "y", ["intervention", "model", "prompt_style"],
                    item="sample_id", family="binomial", item_mode="cluster")
    m = binom.anova.filter(pl.col("term") == "model").row(0, named=True)
    assert 0 < m["deviance_r2"] < m["partial_deviance_r2"] < 1
    assert 0 < m["latent_r2"] < m["partial_latent_r2"] < 1
    assert "non-partial" in binom.model["effect_sizes"]


def test_robustness_bootstrap_and_filtered_flips() -> None:
    """Two models 0.05 apart that swap at the two setup levels: a rank flip of the point
    estimates that paired CIs cannot distinguish from noise."""
    rng = np.random.default_rng(5)
    rows = []
    for i in range(20):
        for setup, pa, pb in (("s1", 0.55, 0.5), ("s2", 0.5, 0.55)):
            rows.append({"model": "a", "setup": setup, "item": f"i{i}",
                         "y": float(rng.random() < pa)})
            rows.append({"model": "b", "setup": setup, "item": f"i{i}",
                         "y": float(rng.random() < pb)})
    df = pl.DataFrame(rows)
    result = analyze(df, "y", ["model", "setup"], item="item", family="binomial",
                     item_mode="cluster")
    entry = result.robustness["setup_factors"]["setup"]
    for stats in entry["per_model"].values():
        lo, hi = stats["spread_ci"]
        assert lo <= stats["spread"] <= hi or stats["spread"] == 0
        assert stats["spread_bias_corrected"] <= stats["spread"] + 1e-12
    if entry["n_rank_flips"]:
        assert entry["n_rank_flips_distinguishable"] == 0
        assert entry["rank_flips"][0]["distinguishable"] is False
    assert entry["kendall_tau"][0]["tau_ci"][0] <= entry["kendall_tau"][0]["tau"]


@pytest.mark.slow
def test_binomial_glmm_separates_item_and_seed() -> None:
    rng = np.random.default_rng(4)
    u, v = rng.normal(0, 1.0, 40), rng.normal(0, 0.7, 6)
    rows = []
    for model, a in (("m1", 0.8), ("m2", -0.2)):
        for s in range(6):
            for i in range(40):
                rows.append({"model": model, "item": f"i{i}", "seed": s,
                             "y": float(rng.random() < expit(a + u[i] + v[s]))})
    result = analyze(pl.DataFrame(rows), "y", ["model"], item="item", family="binomial",
                     item_mode="random", seed="seed")
    shares = dict(result.variance_shares.select("component", "share").rows())
    assert set(shares) == {"model", "item", "seed", "Residual"}
    assert sum(shares.values()) == pytest.approx(1.0)
    assert shares["item"] > shares["seed"] > 0
    assert result.model["estimation"] == "glmm"
    assert result.anova.filter(pl.col("term") == "model")["p"][0] < 0.01


def test_power_plan_and_dry_run_mdd(tmp_path: object) -> None:
    """Items for a target difference and the MDD are inverses (harness.stats), with the
    0/1 worst case sd = sqrt(0.5 / epochs) when no pilot is given."""
    from pathlib import Path

    from harness.factorial.design import power_plan
    from harness.factorial.run import planned_mdd
    from harness.stats import minimum_detectable_difference

    plan = power_plan(0.2, p_a=0.5, p_b=0.5, items=20)
    assert plan["sd_diff"] == pytest.approx(np.sqrt(0.5))
    assert minimum_detectable_difference(plan["items_needed"], plan["sd_diff"]) <= 0.2
    assert minimum_detectable_difference(plan["items_needed"] - 1, plan["sd_diff"]) > 0.2
    mdd, note = planned_mdd(Path(str(tmp_path)) / "none", 20, 1)
    assert mdd == pytest.approx(plan["mdd"]) and "no pilot logs" in note
    result = analyze(_demo_like(), "y", ["intervention", "model", "prompt_style"],
                     item="sample_id", family="binomial", item_mode="cluster")
    power = result.power
    assert power["mdd"] == pytest.approx(
        minimum_detectable_difference(power["n_items"], power["sd_diff"]))


def test_wald_ignores_a_zero_variance_direction_whatever_its_rounding() -> None:
    """A contrast with no sampling variance (a level whose outcomes are constant in every
    item) leaves a covariance singular up to rounding. Whether that rounding lands at 1e-19
    or at exactly 0 depends on the BLAS build; the Wald statistic and its rank must not."""
    from harness.factorial.analysis.linalg import wald

    rng = np.random.default_rng(0)
    basis, _ = np.linalg.qr(rng.normal(size=(5, 5)))
    spectrum = np.array([1.6e-4, 4.1e-5, 1.1e-5, 8.5e-6, 0.0])
    exact = basis @ np.diag(spectrum) @ basis.T
    b = basis @ np.array([0.02, -0.01, 0.004, 0.003, 1e-11])
    chi2, rank = wald(b, exact, range(5))
    assert rank == 4
    for noise in (5e-19, 1e-17, -3e-19):
        rounded = basis @ np.diag(spectrum + np.array([0, 0, 0, 0, noise])) @ basis.T
        again, rank_again = wald(b, rounded, range(5))
        assert rank_again == 4
        assert again == pytest.approx(chi2, rel=1e-6)
    # a direction with real variance, however small in absolute terms, still counts
    small = basis @ np.diag(spectrum * 1e-12) @ basis.T + basis @ np.diag(
        [0, 0, 0, 0, 1e-18]) @ basis.T
    assert wald(b, small, range(5))[1] == 5
    assert wald(b, np.zeros((5, 5)), range(5)) == (pytest.approx(float("nan"), nan_ok=True), 0)


def test_wald_against_a_reference_drops_a_covariance_that_is_zero_everywhere() -> None:
    """A term whose levels coincide with the clusters has a cluster-robust covariance of
    rounding noise in every direction; relative to itself it looks full-rank and the
    statistic is ~1e27. Against the model-based covariance it is no test at all."""
    from harness.factorial.analysis.linalg import wald

    rng = np.random.default_rng(1)
    basis, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    model_based = basis @ np.diag([2e-3, 1e-3, 5e-4]) @ basis.T
    noise = basis @ np.diag([3e-31, 1e-31, 4e-32]) @ basis.T
    b = np.array([0.03, -0.02, 0.01])
    assert wald(b, noise, range(3))[1] == 3  # the relative cut-off alone is fooled
    chi2, rank = wald(b, noise, range(3), reference=model_based)
    assert rank == 0 and np.isnan(chi2)
    # a real robust covariance is tested as before, whatever the reference's scale
    robust = basis @ np.diag([4e-3, 1e-3, 2e-4]) @ basis.T
    plain = wald(b, robust, range(3))
    assert wald(b, robust, range(3), reference=model_based) == (pytest.approx(plain[0]), 3)
    # one zero-variance direction among real ones: dropped, the others kept
    mixed = basis @ np.diag([4e-3, 1e-3, 1e-20]) @ basis.T
    assert wald(b, mixed, range(3), reference=model_based)[1] == 2


def test_binomial_cluster_wald_has_no_test_for_a_term_that_is_the_cluster() -> None:
    """A factor whose levels are the clusters (each seed its own item) has a cluster-robust
    variance of rounding noise; the logit analysis, like the Gaussian one, reports no test
    for it rather than a statistic near 1e27, and still tests the factor that varies within
    clusters."""
    rng = np.random.default_rng(3)
    rows = []
    for i in range(8):
        for method, p in (("a", 0.35), ("b", 0.6)):
            for draw in range(12):
                rows.append({"method": method, "seed": f"s{i}", "item": f"s{i}",
                             "draw": draw, "y": float(rng.random() < p)})
    result = analyze(pl.DataFrame(rows), "y", ["method", "seed"], item="item",
                     family="binomial", item_mode="cluster")
    anova = result.anova
    seed = anova.filter(pl.col("term") == "seed").row(0, named=True)
    assert seed["wald_chi2"] is None or np.isnan(seed["wald_chi2"])
    assert seed["p"] is None or np.isnan(seed["p"])
    assert seed["p_test"] == "none: the term is the cluster"
    method = anova.filter(pl.col("term") == "method").row(0, named=True)
    assert np.isfinite(method["wald_chi2"]) and method["p"] < 0.05
    assert result.model["estimation"] != "firth"


def test_a_cluster_level_term_with_between_cluster_residual_is_still_tested() -> None:
    """Only a term that exhausts the clusters loses its test: a treatment given to 4 of 8
    clusters (cluster-level, 6 between-cluster df left) is tested by both engines."""
    from harness.factorial.analysis.linalg import absorbed_by_clusters

    clusters = np.repeat(np.arange(8), 3)
    intercept = np.ones((24, 1))
    treated = np.where(clusters < 4, 1.0, -1.0)[:, None]
    seed = np.eye(8)[clusters][:, :7] - np.eye(8)[clusters][:, 7:8]  # one level per cluster
    within = np.tile([1.0, -1.0, 0.0], 8)[:, None]
    assert not absorbed_by_clusters(np.hstack([intercept, treated, within]), [1], clusters, 8)
    assert absorbed_by_clusters(np.hstack([intercept, seed, within]), range(1, 8), clusters, 8)
    assert not absorbed_by_clusters(np.hstack([intercept, seed, within]), [8], clusters, 8)
    rng = np.random.default_rng(7)
    rows = [{"arm": "t" if i < 4 else "c", "item": f"i{i}", "draw": d,
             "y": float(rng.random() < (0.8 if i < 4 else 0.3))}
            for i in range(8) for d in range(12)]
    for family in ("binomial", "gaussian"):
        result = analyze(pl.DataFrame(rows), "y", ["arm"], item="item", family=family,
                         item_mode="cluster")
        arm = result.anova.filter(pl.col("term") == "arm").row(0, named=True)
        assert arm["p"] is not None and arm["p"] < 0.05, family


def test_a_contrast_every_item_shows_identically_has_no_test_in_the_coefficients() -> None:
    """Every item scores the same under each level (an exact method: ArborKV's evicting
    search gives the unevicted search's output), while items differ from each other. The
    contrast has no sampling variance: its coefficient is 0 with se 0 and no statistic,
    as the ANOVA says, not a rounding-noise t of 2.7 (p 0.014)."""
    rows = [{"budget": b, "item": f"i{i}", "y": float(i in (3, 11)) + 0.1 * (i % 3)}
            for i in range(20) for b in ("none", "32", "0")]
    result = analyze(pl.DataFrame(rows), "y", ["budget"], item="item", family="gaussian",
                     item_mode="cluster")
    coefs = result.effects.filter(pl.col("name").str.starts_with("budget"))
    assert coefs.height == 2
    assert coefs["estimate"].to_list() == [0.0, 0.0]
    assert coefs["se"].to_list() == [0.0, 0.0]
    assert all(p is None or np.isnan(p) for p in coefs["p"].to_list())
    intercept = result.effects.filter(pl.col("name") == "Intercept").row(0, named=True)
    assert intercept["se"] > 0 and np.isfinite(intercept["p"])
    # one item that differs restores a real (small) variance, and a test
    rows[0]["y"] += 0.5
    shifted = analyze(pl.DataFrame(rows), "y", ["budget"], item="item", family="gaussian",
                      item_mode="cluster").effects.filter(pl.col("name").str.starts_with("budget"))
    assert (shifted["se"] > 0).all() and shifted["p"].is_not_nan().all()


def test_drop_zero_variance_keeps_real_variances_however_small() -> None:
    from harness.factorial.analysis.linalg import drop_zero_variance

    reference = np.diag([1e-2, 1e-2, 1e-2])
    b = np.array([0.3, 2e-18, 1e-3])
    V = np.array([[4e-3, 1e-20, 1e-6], [1e-20, 3e-36, 0.0], [1e-6, 0.0, 1e-11]])
    b2, V2, none = drop_zero_variance(b, V, reference)
    assert none.tolist() == [False, True, False]
    assert b2.tolist() == [0.3, 0.0, 1e-3]  # the zero-variance estimate was rounding noise
    assert V2[1].tolist() == [0.0, 0.0, 0.0] and V2[:, 1].tolist() == [0.0, 0.0, 0.0]
    assert V2[0, 0] == 4e-3 and V2[2, 2] == 1e-11  # 1e-9 of the model-based: still real
    assert b.tolist() == [0.3, 2e-18, 1e-3] and V[1, 1] == 3e-36  # inputs untouched
    same_b, same_V, _ = drop_zero_variance(b[[0, 2]], V[np.ix_([0, 2], [0, 2])],
                                        reference[:2, :2])
    assert same_b.tolist() == [0.3, 1e-3] and same_V[1, 1] == 1e-11


def test_a_coefficient_the_clusters_absorb_has_an_undefined_se_not_zero() -> None:
    """Seeds are the items (each seed its own cluster), so the intercept and the seed
    columns span every cluster mean: no between-cluster residual is left to estimate their
    variance. Their se is undefined (NaN), not the 4e-16 that gave t = 2e15; the
    within-cluster factor keeps its real test."""
    rng = np.random.default_rng(5)
    rows = [{"algo": a, "seed": f"s{i}", "item": f"s{i}", "draw": d,
             "y": float(rng.random() < (0.9 if a == "ours" else 0.7))}
            for i in range(3) for a in ("ours", "naive") for d in range(20)]
    effects = analyze(pl.DataFrame(rows), "y", ["algo", "seed"], item="item",
                      family="gaussian", item_mode="cluster", order=1).effects
    cluster_level = effects.filter(~pl.col("name").str.starts_with("algo"))
    assert cluster_level.height == 3  # the intercept and two seed columns
    assert cluster_level["se"].is_nan().all() and cluster_level["p"].is_nan().all()
    assert cluster_level["estimate"].is_finite().all()
    algo = effects.filter(pl.col("name").str.starts_with("algo")).row(0, named=True)
    assert algo["se"] > 0 and np.isfinite(algo["p"])
