"""WorldTravel's fitted planning horizon: where feasibility halves as constraints grow.

Shared by the scorer's ``horizon`` metric and the Evaluation Report script, so the log
metric and the README column are one computation. The logistic fit is
:func:`harness.stats.fit_logistic` (statistics live in :mod:`harness.stats`); the
constraint-count buckets and macro pass rates are domain definitions and stay in
:mod:`environments.worldtravel.analysis`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from environments.worldtravel.analysis import BUCKETS
from harness.stats import fit_logistic

__all__ = ["HORIZON_CAP", "horizon_by_days", "planning_horizon"]

HORIZON_CAP = 100
"""A crossing beyond this many constraints is reported as none (out of reach)."""


def planning_horizon(
    counts: Sequence[int], feasible: Sequence[float], low: int = BUCKETS[0][0]
) -> float | None:
    """Constraint count at which fitted feasibility falls below half its level at ``low``.

    None when it never does within reach: no decline (slope >= 0), no successes at all,
    or a crossing beyond :data:`HORIZON_CAP` constraints.
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
    return float(n) if n <= HORIZON_CAP else None


def horizon_by_days(
    counts: Sequence[int], days: Sequence[int], feasible: Sequence[float]
) -> dict[str, float | None]:
    """The horizon pooled over the set (``"pooled"``) and fitted within each trip length
    (``"1d"``, ``"2d"``, ...).

    Why both: constraint count and trip length vary independently in the generated set,
    so a within-length fit shows whether feasibility falls with the number of
    constraints at a fixed length (the planning horizon) rather than with the length.
    """
    out: dict[str, float | None] = {"pooled": planning_horizon(counts, feasible)}
    for d in sorted(set(days)):
        keep = [k for k, x in enumerate(days) if x == d]
        out[f"{d}d"] = planning_horizon([counts[k] for k in keep], [feasible[k] for k in keep])
    return out
