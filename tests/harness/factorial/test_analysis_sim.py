"""Simulated studies with planted effects: CIs cover the truth, null terms flag at ~alpha.

200 seeded studies of a 2 x 3 x 2 design (A, B with a planted A:B interaction; D has no
effect at all). Data for all studies are drawn in one vectorised call; each study is then
analysed separately, as a user would.
"""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest

from harness.factorial.analysis import analyze

N_STUDIES = 200
REPS = 8
A_LEVELS, B_LEVELS, D_LEVELS = ["a0", "a1"], ["b0", "b1", "b2"], ["d0", "d1"]
# planted cell means mu[a, b]; D adds nothing
MU = np.array([[0.0, 0.6, 1.2], [1.0, 0.9, 0.4]])


def _truth() -> dict[tuple[str, str], float]:
    grand = MU.mean()
    a_mean, b_mean = MU.mean(axis=1), MU.mean(axis=0)
    truth = {("A", A_LEVELS[i]): a_mean[i] for i in range(2)}
    truth |= {("B", B_LEVELS[j]): b_mean[j] for j in range(3)}
    truth |= {("A:B", f"{A_LEVELS[i]}:{B_LEVELS[j]}"): MU[i, j] for i in range(2) for j in range(3)}
    # sum-to-zero coefficients (the first levels carry the free parameters)
    truth |= {("coef", f"A[{A_LEVELS[0]}]"): a_mean[0] - grand}
    truth |= {("coef", f"B[{B_LEVELS[j]}]"): b_mean[j] - grand for j in range(2)}
    truth |= {
        ("coef", f"A[{A_LEVELS[0]}]:B[{B_LEVELS[j]}]"): MU[0, j] - a_mean[0] - b_mean[j] + grand
        for j in range(2)
    }
    return truth


def _studies(seed: int, binomial: bool = False) -> list[pl.DataFrame]:
    rng = np.random.default_rng(seed)
    cells = list(itertools.product(range(2), range(3), range(2)))
    idx = np.repeat(np.arange(len(cells)), REPS)
    a = np.array([c[0] for c in cells])[idx]
    b = np.array([c[1] for c in cells])[idx]
    d = np.array([c[2] for c in cells])[idx]
    if binomial:
        p = 1 / (1 + np.exp(-(MU[a, b] - 0.6)))
        y = (rng.random((N_STUDIES, len(idx))) < p).astype(float)
    else:
        y = MU[a, b] + rng.normal(size=(N_STUDIES, len(idx)))
    base = pl.DataFrame(
        {
            "A": np.array(A_LEVELS)[a],
            "B": np.array(B_LEVELS)[b],
            "D": np.array(D_LEVELS)[d],
        }
    )
    return [base.with_columns(y=pl.Series(row)) for row in y]


@pytest.mark.slow
def test_planted_effects_are_covered_and_nulls_flag_at_alpha() -> None:
    truth = _truth()
    covered: dict[str, list[bool]] = {"A": [], "B": [], "A:B": [], "coef": []}
    null_p: list[float] = []
    planted_p: list[float] = []
    for df in _studies(seed=2024):
        res = analyze(df, "y", ["A", "B", "D"], order=2, anova_type=3)
        for r in res.marginal_means.to_dicts():
            key = (r["term"], r["level"])
            if key in truth:
                covered[r["term"]].append(r["lo"] <= truth[key] <= r["hi"])
        for r in res.effects.to_dicts():
            if ("coef", r["name"]) in truth:
                covered["coef"].append(r["lo"] <= truth[("coef", r["name"])] <= r["hi"])
        p = {r["term"]: r["p"] for r in res.anova.to_dicts()}
        null_p += [p["D"], p["A:D"], p["B:D"]]
        planted_p += [p["A:B"]]
    for name, hits in covered.items():
        assert len(hits) >= N_STUDIES, name
        assert np.mean(hits) >= 0.90, f"{name} coverage {np.mean(hits):.3f}"
    rate = np.mean(np.array(null_p) < 0.05)
    assert 0.02 <= rate <= 0.09, f"null rejection rate {rate:.3f}"
    assert np.mean(np.array(planted_p) < 0.05) >= 0.8  # the interaction is really found


@pytest.mark.slow
def test_binomial_null_terms_flag_at_alpha() -> None:
    null_p: list[float] = []
    for df in _studies(seed=99, binomial=True):
        res = analyze(df, "y", ["A", "B", "D"], family="binomial", order=2, anova_type=2)
        p = {r["term"]: r["p"] for r in res.anova.to_dicts()}
        null_p += [p["D"], p["A:D"], p["B:D"]]
    rate = np.mean(np.array(null_p) < 0.05)
    assert 0.02 <= rate <= 0.09, f"null rejection rate {rate:.3f}"
