"""The fitted planning horizon (moved from environments: it needs harness.stats' fit)."""

from __future__ import annotations

import pytest

from benchmarks.worldtravel.analysis import planning_horizon

COUNTS = [n for n in range(5, 31) for _ in range(6)]
FALLING = [1.0 if n < 15 else 0.0 for n in COUNTS]


def test_horizon_where_feasibility_halves() -> None:
    horizon = planning_horizon(COUNTS, FALLING)
    assert horizon is not None
    # the number the environment's own fit gave before the move (same fit, same data)
    assert horizon == pytest.approx(14.517995655846182, rel=1e-12)
    assert 12 <= horizon <= 17


def test_no_horizon_without_a_decline() -> None:
    assert planning_horizon(COUNTS, [1.0] * len(COUNTS)) is None  # never falls
    assert planning_horizon(COUNTS, [0.0] * len(COUNTS)) is None  # never feasible
    assert planning_horizon([5], [1.0]) is None  # one scenario: nothing to fit
    rising = [0.0 if n < 15 else 1.0 for n in COUNTS]
    assert planning_horizon(COUNTS, rising) is None


def test_horizon_within_each_trip_length() -> None:
    """Pooled and per-length fits: a decline with count inside every length is found in
    each, and a length with no decline reports none."""
    from benchmarks.worldtravel.analysis import horizon_by_days

    days = [1 + k % 2 for k in range(len(COUNTS))]
    falling = [1.0 if (n < 15 if d == 1 else n < 20) else 0.0 for n, d in zip(COUNTS, days,
                                                                           strict=True)]
    out = horizon_by_days(COUNTS, days, falling)
    assert set(out) == {"pooled", "1d", "2d"}
    assert out["1d"] is not None and out["2d"] is not None and out["1d"] < out["2d"]
    flat = [1.0 if d == 2 else f for f, d in zip(falling, days, strict=True)]
    assert horizon_by_days(COUNTS, days, flat)["2d"] is None
