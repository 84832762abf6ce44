"""Aggregates over checked plans: macro pass rates, feasibility by constraint-count
bucket and the fitted planning horizon. Pure numpy, shared by the scorer's metrics and
the report script, so the log metrics and the README table are one computation."""

from __future__ import annotations

import math
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


def fit_logistic(
    x: Sequence[float], y: Sequence[float], ridge: float = 1e-3, iters: int = 50
) -> tuple[float, float]:
    """(intercept, slope) of a logistic regression of y on x by Newton's method.

    A small ridge penalty keeps the fit finite under separation (all-0 / all-1 groups);
    x is centred internally for stability.
    """
    xs = np.asarray(x, dtype=float)
    ys = np.asarray(y, dtype=float)
    mu = xs.mean() if len(xs) else 0.0
    design = np.column_stack([np.ones_like(xs), xs - mu])
    beta = np.zeros(2)
    for _ in range(iters):
        p = 1 / (1 + np.exp(-design @ beta))
        grad = design.T @ (ys - p) - ridge * beta
        hess = design.T @ (design * (p * (1 - p))[:, None]) + ridge * np.eye(2)
        step = np.linalg.solve(hess, grad)
        beta = beta + step
        if np.abs(step).max() < 1e-9:
            break
    return float(beta[0] - beta[1] * mu), float(beta[1])


def planning_horizon(
    counts: Sequence[int], feasible: Sequence[float], low: int = BUCKETS[0][0]
) -> float | None:
    """Constraint count at which fitted feasibility falls below half its level at ``low``.

    None when it never does within reach: no decline (slope >= 0), no successes at all,
    or a crossing beyond 100 constraints.
    """
    if len(counts) < 2 or not any(feasible) or len(set(counts)) < 2:
        return None
    a, b = fit_logistic(counts, feasible)
    if b >= 0:
        return None
    p_low = 1 / (1 + math.exp(-(a + b * low)))
    half = p_low / 2
    if half <= 0:
        return None
    n = (math.log(half / (1 - half)) - a) / b
    return float(n) if n <= 100 else None
