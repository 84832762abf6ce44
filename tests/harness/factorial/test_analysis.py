"""ANOVA against published textbook tables and against statsmodels on unbalanced data.

Textbook source: D. C. Montgomery, *Design and Analysis of Experiments*, 8th ed. (Wiley,
2013). The CSVs under data/ were typed from the book's data tables:
- battery life: Example 5.1 (data Table 5.1, ANOVA Table 5.5), material x temperature, n=4;
- plasma etch: Example 6.1 (2^3, n=2; factors A gap, B gas flow, C RF power), ANOVA table
  of that example;
- filtration rate: Example 6.2 (unreplicated 2^4), ANOVA of the model projected onto A, C,
  D, AC, AD.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf
from statsmodels.stats.anova import anova_lm

from harness.factorial.analysis import analyze, analyze_csv

DATA = Path(__file__).parent / "data"


def _two_dp(value: float, published: float) -> bool:
    """Equal to the published figure at its two printed decimals (half-up rounding)."""
    return abs(value - published) <= 0.005 + 1e-9


def _rows(result) -> dict[str, dict]:
    return {r["term"]: r for r in result.anova.to_dicts()}


@pytest.mark.parametrize("anova_type", [2, 3])
def test_battery_life_two_factor_anova(anova_type: int) -> None:
    result = analyze_csv(
        DATA / "montgomery_battery_life.csv",
        "life",
        ["material", "temperature"],
        anova_type=anova_type,
    )
    rows = _rows(result)
    published = {  # term: (SS, df, F)
        "material": (10683.72, 2, 7.91),
        "temperature": (39118.72, 2, 28.97),
        "material:temperature": (9613.78, 4, 3.56),
    }
    for term, (ss, df, F) in published.items():
        assert _two_dp(rows[term]["sum_sq"], ss)
        assert rows[term]["df"] == df
        assert _two_dp(rows[term]["F"], F)
    assert _two_dp(rows["Residual"]["sum_sq"], 18230.75) and rows["Residual"]["df"] == 27


@pytest.mark.parametrize("anova_type", [2, 3])
def test_plasma_etch_two_cubed(anova_type: int) -> None:
    # the factor named C would collide with patsy's C(); the table must still say "C"
    result = analyze_csv(
        DATA / "montgomery_plasma_etch.csv",
        "etch_rate",
        ["A", "B", "C"],
        order=3,
        anova_type=anova_type,
    )
    rows = _rows(result)
    published = {
        "A": (41310.56, 18.34),
        "B": (217.56, 0.10),
        "C": (374850.06, 166.41),
        "A:B": (2475.06, 1.10),
        "A:C": (94402.56, 41.91),
        "B:C": (18.06, 0.01),
        "A:B:C": (126.56, 0.06),
    }
    for term, (ss, F) in published.items():
        assert _two_dp(rows[term]["sum_sq"], ss)
        assert rows[term]["df"] == 1
        assert _two_dp(rows[term]["F"], F)
    assert _two_dp(rows["Residual"]["sum_sq"], 18020.50) and rows["Residual"]["df"] == 8


def test_filtration_rate_projected_model() -> None:
    result = analyze_csv(
        DATA / "montgomery_filtration_rate.csv",
        "filtration",
        ["A", "B", "C", "D"],
        terms=["A", "C", "D", "A:C", "A:D"],
    )
    rows = _rows(result)
    published = {
        "A": (1870.56, 95.86),
        "C": (390.06, 19.99),
        "D": (855.56, 43.85),
        "A:C": (1314.06, 67.34),
        "A:D": (1105.56, 56.66),
    }
    for term, (ss, F) in published.items():
        assert _two_dp(rows[term]["sum_sq"], ss)
        assert _two_dp(rows[term]["F"], F)
    assert _two_dp(rows["Residual"]["sum_sq"], 195.13) and rows["Residual"]["df"] == 10
    # the main effect of A in the book is 21.625: the paired contrast of the two levels
    pair = result.pairwise.filter(pl.col("factor") == "A").row(0, named=True)
    assert abs(abs(pair["estimate"]) - 21.625) < 1e-9
    assert "B" not in result.pairwise.get_column("factor").to_list()  # B is not in the model


# ---------------------------------------------------------------------------------------
# equality with statsmodels on unbalanced data with awkward factor names


@pytest.fixture(scope="module")
def unbalanced() -> tuple[pl.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(1)
    n = 400
    df = pl.DataFrame(
        {
            "C": rng.choice(["a", "b", "c"], n),
            "my f": rng.choice(["x", "y"], n, p=[0.3, 0.7]),
            "Q": rng.choice(["u", "v"], n),
            "item": rng.integers(0, 30, n).astype(str),
        }
    )
    item_effect = rng.normal(size=30)[df["item"].cast(pl.Int64).to_numpy()]
    y = rng.normal(size=n) + 0.5 * (df["C"] == "b").to_numpy() + item_effect
    df = df.with_columns(y=pl.Series(y), yb=pl.Series((y > 0.3).astype(int)))
    pdf = df.to_pandas().rename(columns={"C": "F1", "my f": "F2", "Q": "F3"})
    return df, pdf


FACTORS = ["C", "my f", "Q"]
RHS2 = "(C(F1, Sum) + C(F2, Sum) + C(F3, Sum))**2"


@pytest.mark.parametrize("anova_type", [2, 3])
def test_ols_anova_equals_statsmodels(unbalanced, anova_type: int) -> None:
    df, pdf = unbalanced
    result = analyze(df, "y", FACTORS, order=3, anova_type=anova_type)
    ref = anova_lm(smf.ols("y ~ C(F1, Sum)*C(F2, Sum)*C(F3, Sum)", pdf).fit(), typ=anova_type)
    ref = ref.drop(index="Intercept", errors="ignore")
    assert result.anova.get_column("term").to_list() == [
        "C",
        "my f",
        "Q",
        "C:my f",
        "C:Q",
        "my f:Q",
        "C:my f:Q",
        "Residual",
    ]
    np.testing.assert_allclose(
        result.anova["sum_sq"].to_numpy(), ref["sum_sq"].to_numpy(), rtol=1e-9
    )
    np.testing.assert_allclose(
        result.anova["F"].to_numpy()[:-1], ref["F"].to_numpy()[:-1], rtol=1e-9
    )
    assert result.model["formula"].startswith('y ~ Q("C") + Q("my f") + Q("Q")')


@pytest.mark.parametrize("anova_type", [2, 3])
def test_item_fixed_block_equals_statsmodels(unbalanced, anova_type: int) -> None:
    df, pdf = unbalanced
    result = analyze(df, "y", FACTORS, item="item", item_mode="fixed", anova_type=anova_type)
    ref = anova_lm(smf.ols(f"y ~ {RHS2} + C(item, Sum)", pdf).fit(), typ=anova_type)
    ours = {r["term"]: r for r in result.anova.to_dicts()}
    names = {
        "C(F1, Sum)": "C",
        "C(F2, Sum)": "my f",
        "C(F3, Sum)": "Q",
        "C(item, Sum)": "item",
        "C(F1, Sum):C(F2, Sum)": "C:my f",
        "C(F1, Sum):C(F3, Sum)": "C:Q",
        "C(F2, Sum):C(F3, Sum)": "my f:Q",
        "Residual": "Residual",
    }
    for ref_name, name in names.items():
        assert ours[name]["sum_sq"] == pytest.approx(ref.loc[ref_name, "sum_sq"], rel=1e-9)
        assert ours[name]["df"] == ref.loc[ref_name, "df"]
        if name != "Residual":
            assert ours[name]["F"] == pytest.approx(ref.loc[ref_name, "F"], rel=1e-9)


def test_item_cluster_robust_equals_statsmodels(unbalanced) -> None:
    df, pdf = unbalanced
    result = analyze(df, "y", FACTORS, item="item", item_mode="cluster", anova_type=3)
    ref = smf.ols(f"y ~ {RHS2}", pdf).fit(
        cov_type="cluster", cov_kwds={"groups": pdf["item"].astype(int)}
    )
    np.testing.assert_allclose(
        result.effects["estimate"].to_numpy(), ref.params.to_numpy(), rtol=1e-9
    )
    np.testing.assert_allclose(result.effects["se"].to_numpy(), ref.bse.to_numpy(), rtol=1e-9)
    # the term test is the robust Wald test of the term's coefficients
    wald = ref.wald_test("C(F1, Sum)[S.a] = 0, C(F1, Sum)[S.b] = 0", use_f=True, scalar=True)
    c_row = result.anova.filter(pl.col("term") == "C").row(0, named=True)
    assert c_row["F"] == pytest.approx(float(wald.statistic), rel=1e-9)


def test_item_random_intercept_equals_mixedlm(unbalanced) -> None:
    df, pdf = unbalanced
    result = analyze(df, "y", FACTORS, item="item", item_mode="random", anova_type=3)
    ref = smf.mixedlm(f"y ~ {RHS2}", pdf, groups=pdf["item"]).fit(reml=True)
    np.testing.assert_allclose(
        result.effects["estimate"].to_numpy(), ref.fe_params.to_numpy(), rtol=1e-4, atol=1e-6
    )
    assert result.model["item_variance"] == pytest.approx(float(ref.cov_re.iloc[0, 0]), rel=1e-3)
    assert {r["component"] for r in result.variance_shares.to_dicts()} >= {"item", "Residual"}


def test_binomial_glm_equals_statsmodels(unbalanced) -> None:
    df, pdf = unbalanced
    result = analyze(df, "yb", FACTORS, family="binomial", anova_type=3)
    full = smf.glm(f"yb ~ {RHS2}", pdf, family=sm.families.Binomial()).fit()
    np.testing.assert_allclose(
        result.effects["estimate"].to_numpy(), full.params.to_numpy(), rtol=1e-6
    )
    np.testing.assert_allclose(result.effects["se"].to_numpy(), full.bse.to_numpy(), rtol=1e-6)
    assert result.model["deviance"] == pytest.approx(full.deviance, rel=1e-9)
    # LR chi2 of the type III test for C = deviance drop when C's columns leave the model
    X = pd.DataFrame(full.model.exog, columns=full.model.exog_names)
    reduced = sm.GLM(
        pdf["yb"],
        X.drop(columns=[c for c in X if c.startswith("C(F1, Sum)[") and ":" not in c]),
        family=sm.families.Binomial(),
    ).fit()
    c_row = result.anova.filter(pl.col("term") == "C").row(0, named=True)
    assert c_row["sum_sq"] == pytest.approx(reduced.deviance - full.deviance, rel=1e-6)
    clustered = smf.glm(f"yb ~ {RHS2}", pdf, family=sm.families.Binomial()).fit(
        cov_type="cluster", cov_kwds={"groups": pdf["item"].astype(int)}
    )
    robust = analyze(df, "yb", FACTORS, item="item", family="binomial", item_mode="cluster")
    np.testing.assert_allclose(robust.effects["se"].to_numpy(), clustered.bse.to_numpy(), rtol=1e-6)


# ---------------------------------------------------------------------------------------
# summaries on a constructed study with known answers


@pytest.fixture(scope="module")
def study() -> pl.DataFrame:
    """3 models x 2 prompts, 40 items; model means per prompt are planted exactly."""
    means = {
        ("m1", "plain"): 0.80,
        ("m1", "cot"): 0.70,
        ("m2", "plain"): 0.60,
        ("m2", "cot"): 0.75,
        ("m3", "plain"): 0.40,
        ("m3", "cot"): 0.50,
    }
    rng = np.random.default_rng(7)
    items = np.arange(40)
    item_shift = rng.normal(0, 0.1, size=40)
    noise = rng.normal(0, 0.05, size=40)
    noise -= noise.mean()  # item noise averages to zero: cell means are exactly planted
    item_shift -= item_shift.mean()
    rows = []
    for cell, ((model, prompt), mu) in enumerate(means.items()):
        for i in items:  # a rotation of the noise per cell, so it sums to zero in every cell
            rows.append(
                {
                    "model": model,
                    "prompt": prompt,
                    "item": f"q{i}",
                    "score": mu + item_shift[i] + noise[(i + 7 * cell) % 40],
                }
            )
    return pl.DataFrame(rows)


def test_robustness_and_attribution(study: pl.DataFrame) -> None:
    result = analyze(study, "score", ["model", "prompt"], item="item", item_mode="fixed")
    rob = result.robustness["setup_factors"]["prompt"]
    m1 = rob["per_model"]["m1"]
    assert m1["spread"] == pytest.approx(0.10)
    assert m1["cps"] == pytest.approx((1 - (0.80 - 0.75)) * 0.80)
    flips = {tuple(f["models"]) for f in rob["rank_flips"]}
    assert flips == {("m1", "m2")}  # m2 passes m1 under cot; m3 stays last
    assert rob["kendall_tau"][0]["tau"] == pytest.approx(1 / 3)
    assert 0 < rob["kendall_w"] < 1
    att = result.attribution
    assert att["models"] == ["m1", "m2"]  # the two best on average
    gaps = att["setup_factors"]["prompt"]["gap_by_level"]
    assert gaps["plain"] == pytest.approx(0.20) and gaps["cot"] == pytest.approx(-0.05)
    assert att["gap"] == pytest.approx(0.075)
    share = att["setup_factors"]["prompt"]["interaction_share"]
    assert share == pytest.approx(2 * 0.125**2 / (2 * 0.125**2 + 2 * 0.075**2))
    assert result.power["sd_diff"] > 0 and result.power["items_needed"] >= 2


def test_marginal_means_and_pairwise(study: pl.DataFrame) -> None:
    result = analyze(study, "score", ["model", "prompt"], item="item", item_mode="cluster")
    emm = {(r["term"], r["level"]): r for r in result.marginal_means.to_dicts()}
    assert emm[("model", "m1")]["estimate"] == pytest.approx(0.75)
    assert emm[("model:prompt", "m2:cot")]["estimate"] == pytest.approx(0.75)
    assert emm[("model", "m1")]["lo"] < 0.75 < emm[("model", "m1")]["hi"]
    pairs = result.pairwise.filter(pl.col("factor") == "model")
    assert pairs.height == 3 and set(pairs["method"]) == {"paired_by_item"}
    m1m3 = pairs.filter((pl.col("a") == "m1") & (pl.col("b") == "m3")).row(0, named=True)
    assert m1m3["estimate"] == pytest.approx(0.30)
    assert all(pairs["p_holm"] >= pairs["p"] - 1e-15)
    payload = result.to_dict()
    assert set(payload) >= {
        "anova",
        "variance_shares",
        "marginal_means",
        "pairwise",
        "robustness",
        "attribution",
        "power",
        "model",
    }
    assert set(payload["anova"][0]) >= {"term", "sum_sq", "df", "F", "p", "partial_eta2", "omega2"}
    json.dumps(payload, allow_nan=False)


def test_effect_sizes_and_shares(study: pl.DataFrame) -> None:
    result = analyze(study, "score", ["model", "prompt"], item="item", item_mode="fixed")
    rows = _rows(result)
    mse = rows["Residual"]["sum_sq"] / rows["Residual"]["df"]
    total = float(((study["score"] - study["score"].mean()) ** 2).sum())
    r = rows["model"]
    assert r["partial_eta2"] == pytest.approx(
        r["sum_sq"] / (r["sum_sq"] + rows["Residual"]["sum_sq"])
    )
    assert r["omega2"] == pytest.approx((r["sum_sq"] - r["df"] * mse) / (total + mse))
    shares = {s["component"]: s["share"] for s in result.variance_shares.to_dicts()}
    assert shares["item"] > 0 and sum(shares.values()) == pytest.approx(1.0)  # balanced


def test_errors_name_the_problem(tmp_path: Path) -> None:
    path = tmp_path / "scores.csv"
    pl.DataFrame({"model": ["a", "b"], "score": [0, 1]}).write_csv(path)
    with pytest.raises(ValueError, match="'prompt'"):
        analyze_csv(path, "score", ["model", "prompt"])
    with pytest.raises(ValueError, match="0/1"):
        analyze(pl.DataFrame({"m": ["a", "b"], "s": [0.5, 1.0]}), "s", ["m"], family="binomial")
    with pytest.raises(ValueError, match="item column"):
        analyze(pl.DataFrame({"m": ["a", "b"], "s": [0.5, 1.0]}), "s", ["m"], item_mode="cluster")


def test_binomial_cluster_keeps_clustered_test_under_separation_via_firth() -> None:
    """An always-right level separates the logit fit: the ML Wald p is meaningless (~1)
    (Hauck-Donner). The engine detects it, fits Firth's penalised model, keeps the
    item-clustered Wald test on the (finite) Firth estimates, requires the penalised LR
    test to agree (the larger p) and says so."""
    import polars as pl

    from harness.factorial.analysis import analyze

    rows = []
    for item in range(30):
        rows.append({"model": "oracle", "style": "a", "item": item, "y": 1.0})
        rows.append({"model": "oracle", "style": "b", "item": item, "y": 1.0})
        rows.append({"model": "weak", "style": "a", "item": item, "y": float(item % 3 == 0)})
        rows.append({"model": "weak", "style": "b", "item": item, "y": float(item % 4 == 0)})
    result = analyze(pl.DataFrame(rows), "y", ["model", "style"], item="item",
                     family="binomial", item_mode="cluster").to_dict()
    model_row = next(r for r in result["anova"] if r["term"] == "model")
    assert model_row["separation"] is True
    assert model_row["p_test"] == "max(wald-cluster, lr)-firth"
    assert model_row["p"] == max(model_row["wald_p"], model_row["lr_p"]) < 1e-10
    sep = result["model"]["separation"]
    assert result["model"]["estimation"] == "firth" and sep["detected"]
    assert sep["cells"] == ["model=oracle, style=a", "model=oracle, style=b"]
    assert "Firth" in sep["action"] and "item-clustered" in sep["action"]
    coef = {r["name"]: r for r in result["effects"]}
    assert all(abs(r["estimate"]) < 10 and r["se"] < 10 for r in coef.values())
