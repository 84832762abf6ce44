"""harness.stats.fractional_logit_effects: a graded share's standardised effects.

Known answers on synthetic frames (the count matters and the length not, and the reverse),
the sandwich covariance against statsmodels' GLM, the pooled fit with one intercept per
planner clustered by scenario, and the degenerate cases."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm

from harness.stats import fractional_logit_effects


def _frame(seed: int, n: int = 150) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    count = rng.integers(8, 31, n).astype(float)
    days = rng.integers(1, 5, n).astype(float)
    trials = rng.integers(3, 12, n)
    return count, days, trials


def _shares(eta: np.ndarray, trials: np.ndarray, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.binomial(trials, 1 / (1 + np.exp(-eta))) / trials


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_count_wins_when_only_the_count_matters(seed: int) -> None:
    count, days, trials = _frame(seed)
    y = _shares(2.0 - 0.12 * count, trials, seed + 100)
    fit = fractional_logit_effects(y, {"count": count, "days": days}, compare=("count", "days"))
    assert fit["converged"]
    eff, cmp = fit["effects"], fit["compare"]
    assert eff["count"]["high"] < 0  # harder with more constraints
    assert eff["days"]["low"] < 0 < eff["days"]["high"]  # no length effect in the data
    assert cmp["low"] > 0 and cmp["p"] < 0.01  # count's magnitude larger, tested


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_length_wins_when_only_the_length_matters(seed: int) -> None:
    count, days, trials = _frame(seed)
    y = _shares(2.5 - 0.9 * days, trials, seed + 200)
    fit = fractional_logit_effects(y, {"count": count, "days": days}, compare=("count", "days"))
    eff, cmp = fit["effects"], fit["compare"]
    assert eff["days"]["high"] < 0
    assert eff["count"]["low"] < 0 < eff["count"]["high"]
    assert cmp["high"] < 0  # count's magnitude smaller


def test_equal_effects_are_not_told_apart() -> None:
    count, days, trials = _frame(3, n=400)
    zc, zd = (count - count.mean()) / count.std(), (days - days.mean()) / days.std()
    y = _shares(1.0 - 0.5 * zc - 0.5 * zd, trials, 7)
    cmp = fractional_logit_effects(y, {"count": count, "days": days},
                                   compare=("count", "days"))["compare"]
    assert cmp["low"] < 0 < cmp["high"]


def test_coefficients_and_sandwich_match_statsmodels() -> None:
    count, days, trials = _frame(4)
    y = _shares(1.5 - 0.08 * count - 0.3 * days, trials, 9)
    ours = fractional_logit_effects(y, {"count": count, "days": days})["effects"]
    design = np.column_stack([np.ones(len(y)), (count - count.mean()) / count.std(),
                              (days - days.mean()) / days.std()])
    ref = sm.GLM(y, design, family=sm.families.Binomial()).fit(
        cov_type="cluster", cov_kwds={"groups": np.arange(len(y))})
    for k, name in enumerate(("count", "days"), start=1):
        assert ours[name]["coef"] == pytest.approx(ref.params[k], abs=1e-7)
        assert ours[name]["se"] == pytest.approx(ref.bse[k], rel=1e-6)


def test_pooled_fit_with_planner_intercepts_clustered_by_scenario() -> None:
    count, days, trials = _frame(5)
    n = len(count)
    offsets = [0.0, 1.0, -0.5]
    ys = np.concatenate([_shares(2.0 + o - 0.12 * count, trials, 30 + j)
                         for j, o in enumerate(offsets)])
    rows = {"count": np.tile(count, 3), "days": np.tile(days, 3)}
    groups = [name for name in ("a", "b", "c") for _ in range(n)]
    scenario = np.tile(np.arange(n), 3)
    fit = fractional_logit_effects(ys, rows, cluster=scenario, groups=groups,
                                   compare=("count", "days"))
    assert fit["clusters"] == n and fit["n"] == 3 * n
    assert fit["effects"]["count"]["high"] < 0 and fit["compare"]["low"] > 0
    ref = sm.GLM(ys, np.column_stack([np.array([g == v for g in groups], float)
                                      for v in "abc"] + [
        (rows[k] - rows[k].mean()) / rows[k].std() for k in ("count", "days")]),
        family=sm.families.Binomial()).fit(cov_type="cluster", cov_kwds={"groups": scenario})
    assert fit["effects"]["count"]["se"] == pytest.approx(ref.bse[3], rel=1e-6)


def test_degenerate_inputs_give_none() -> None:
    count, days, _ = _frame(6)
    flat = fractional_logit_effects(np.full(len(count), 0.4), {"count": count, "days": days},
                                    compare=("count", "days"))
    assert flat["effects"]["count"]["coef"] is None and flat["compare"]["difference"] is None
    const = fractional_logit_effects(np.linspace(0, 1, len(count)),
                                     {"count": count, "k": np.ones(len(count))})
    assert const["effects"]["k"]["coef"] is None and const["effects"]["count"]["coef"] is not None
    with pytest.raises(ValueError):
        fractional_logit_effects(np.array([0.2, 1.5]), {"count": [1.0, 2.0]})
