"""Aggregates over checked plans: constraint-count buckets, macro pass rates and
feasibility by bucket. Pure Python and numpy, shared by the scorer's metrics and the report
script, so the log metrics and the README table are one computation.

The fitted planning horizon needs a statistical model, so it lives with the benchmark
(``benchmarks.worldtravel.analysis``, on :func:`harness.stats.fit_logistic`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

BUCKETS: tuple[tuple[int, int], ...] = ((5, 9), (10, 14), (15, 19), (20, 24), (25, 30))


def bucket(n: int) -> str:
    """Label of the constraint-count bucket holding ``n`` (e.g. ``"10-14"``)."""
    for lo, hi in BUCKETS:
        if lo <= n <= hi:
            return f"{lo}-{hi}"
    return f"{BUCKETS[-1][1] + 1}+" if n > BUCKETS[-1][1] else f"<{BUCKETS[0][0]}"


def macro_by_kind(
    results: Iterable[Sequence[dict[str, Any]]], field: str = "kind"
) -> dict[str, float]:
    """Per kind (or ``field="category"``): share of plans passing *all* its instances.

    ``results`` holds, per scenario, the checker's per-constraint result records;
    scenarios without the kind do not count towards its denominator (TravelPlanner's
    macro pass rate, by kind).
    """
    hit: dict[str, int] = {}
    total: dict[str, int] = {}
    for rows in results:
        keys = {r[field] for r in rows}
        for key in keys:
            total[key] = total.get(key, 0) + 1
            hit[key] = hit.get(key, 0) + all(r["passed"] for r in rows if r[field] == key)
    return {k: hit[k] / total[k] for k in sorted(total)}


def feasibility_by_bucket(counts: Sequence[int], feasible: Sequence[float]) -> dict[str, float]:
    """Mean feasibility per constraint-count bucket (buckets with no scenario omitted)."""
    groups: dict[str, list[float]] = {}
    for n, f in zip(counts, feasible, strict=True):
        groups.setdefault(bucket(int(n)), []).append(float(f))
    order = [f"{lo}-{hi}" for lo, hi in BUCKETS]
    return {
        k: float(np.mean(groups[k]))
        for k in sorted(groups, key=lambda k: (order.index(k) if k in order else len(order), k))
    }
