"""Honest-board statistics (issue 51 item 2): tie groups, neighbour MDE, Wilson at 0/100%."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.stats import (
    adjacent_mdd,
    binary_sd_diff,
    minimum_detectable_difference,
    rank_tie_groups,
    score_mean_ci,
    wilson_interval,
)


def test_tie_groups_cut_only_where_every_interval_above_clears_every_one_below() -> None:
    # 1-1 | 2-3, 2-4, 3-4 | 5-5 : the middle three overlap in a chain
    assert rank_tie_groups([1, 2, 2, 3, 5], [1, 3, 4, 4, 5]).tolist() == [1, 2, 2, 2, 3]
    # A (1-2) and C (3-3) are separable but both overlap B (1-3): one group (no clean cut)
    assert rank_tie_groups([1, 1, 3], [2, 3, 3]).tolist() == [1, 1, 1]
    # every interval a single rank: every system its own group
    assert rank_tie_groups([1, 2, 3], [1, 2, 3]).tolist() == [1, 2, 3]
    # a wide interval lower down reaches back above a narrow one: no cut at 1|2
    assert rank_tie_groups([1, 2, 1], [1, 2, 3]).tolist() == [1, 1, 1]
    assert rank_tie_groups([], []).tolist() == []


def test_adjacent_mdd_uses_the_observed_sd_and_never_reports_zero() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.random(40), rng.random(40)
    mdd, sd, basis = adjacent_mdd(a, b, bounded=True)
    assert sd == pytest.approx(float(np.std(a - b, ddof=1)))
    assert mdd == pytest.approx(minimum_detectable_difference(40, sd))
    assert "observed" in basis
    # two systems at 0% on 5 items: no observed variance; the [0, 1] planning SD instead
    mdd0, sd0, basis0 = adjacent_mdd(np.zeros(5), np.zeros(5), bounded=True)
    assert sd0 == pytest.approx(binary_sd_diff()) and mdd0 is not None and mdd0 > 1.0
    assert "planning" in basis0
    # an unbounded score with no variance has no MDE, and neither does a single item
    assert adjacent_mdd([3.0, 3.0], [1.0, 1.0])[0] is None
    assert adjacent_mdd([1.0], [0.0], bounded=True)[0] is None
    with pytest.raises(ValueError):
        adjacent_mdd([1.0, 0.0], [0.0], bounded=True)


@pytest.mark.parametrize("value", [0.0, 1.0, 0.42])
def test_a_constant_bounded_score_gets_a_wilson_interval_not_se_zero(value: float) -> None:
    values = np.full(6, value)
    plain = score_mean_ci(values, cluster=np.arange(6), bounds=(0.0, 1.0), binary=False)
    assert plain.se == 0.0 and plain.lo == plain.hi == pytest.approx(value)  # the old way
    est = score_mean_ci(values, cluster=np.arange(6), bounds=(0.0, 1.0), binary=False,
                        wilson_when_constant=True)
    lo, hi = wilson_interval(value, 6.0)
    assert (est.lo, est.hi) == pytest.approx((lo, hi)) and est.se > 0 and hi - lo > 0.3
    assert est.estimate == pytest.approx(value)


def test_wilson_when_constant_counts_items_not_epochs_and_leaves_the_rest_alone() -> None:
    # one item, three epochs, all 1: n_eff is one item
    est = score_mean_ci([1.0, 1.0, 1.0], cluster=["x", "x", "x"], bounds=(0.0, 1.0),
                        binary=False, wilson_when_constant=True)
    assert (est.lo, est.hi) == pytest.approx(wilson_interval(1.0, 1.0))
    # a score with variance keeps its t interval; an unbounded constant keeps its (empty) one
    varied = [0.2, 0.4, 0.9]
    assert score_mean_ci(varied, bounds=(0.0, 1.0), binary=False,
                         wilson_when_constant=True) == score_mean_ci(
        varied, bounds=(0.0, 1.0), binary=False)
    unbounded = score_mean_ci([5.0, 5.0], binary=False, wilson_when_constant=True)
    assert unbounded.se == 0.0 and not math.isnan(unbounded.lo)
