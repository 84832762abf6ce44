"""Aggregates over checked plans: constraint-count buckets, macro pass rates,
feasibility by bucket and TravelPlanner's six rates (commonsense vs hard constraints).
Pure Python and numpy, shared by the scorer's metrics and the report script, so the log
metrics and the README table are one computation.

The fitted planning horizon needs a statistical model, so it lives with the benchmark
(``benchmarks.worldtravel.analysis``, on :func:`harness.stats.fit_logistic`)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
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


# ------------------------------------------------------------ TravelPlanner's pass rates

COMMONSENSE_KINDS: frozenset[str] = frozenset(
    {"skeleton", "opening_hours", "travel_time", "timed_entry", "min_duration", "lodging"}
)
"""The base ("physics") kinds every scenario carries, whatever the traveller asked: the
analogue of TravelPlanner's commonsense constraints (complete information, within the
sandbox, a reasonable route, valid transport and stays). The sampled kinds are what the
traveller asked for (budgets, counts, cuisines, rooms...): its hard constraints."""

GATE_KIND = "skeleton"
"""TravelPlanner checks hard constraints only on a plan with complete information inside
the sandbox; here: a delivered plan whose every day has its skeleton (every slot, right
start and end). A plan failing the gate passes no hard constraint."""


def constraint_class(kind: str) -> str:
    """``commonsense`` (a base kind) or ``hard`` (a sampled kind)."""
    return "commonsense" if kind in COMMONSENSE_KINDS else "hard"


@dataclass(frozen=True)
class PlanCounts:
    """One plan's constraint counts by TravelPlanner class (the inputs of its rates)."""

    delivered: bool
    commonsense_passed: int
    commonsense_total: int
    hard_passed: int
    hard_total: int
    gate: bool

    @property
    def commonsense_all(self) -> bool:
        """Delivered, and every commonsense constraint passes."""
        return self.delivered and self.commonsense_passed == self.commonsense_total

    @property
    def hard_all(self) -> bool:
        """Through the gate, and every hard constraint passes (vacuously, when none)."""
        return self.hard_passed == self.hard_total and self.gate


def plan_counts(delivered: bool, results: Sequence[dict[str, Any]]) -> PlanCounts:
    """Counts of one checker report's results (``[{"kind", "passed", ...}]``)."""
    gate = bool(delivered) and all(r["passed"] for r in results if r["kind"] == GATE_KIND)
    common = [bool(r["passed"]) for r in results if r["kind"] in COMMONSENSE_KINDS]
    hard = [bool(r["passed"]) for r in results if r["kind"] not in COMMONSENSE_KINDS]
    return PlanCounts(
        delivered=bool(delivered),
        commonsense_passed=sum(common) if delivered else 0,
        commonsense_total=len(common),
        hard_passed=sum(hard) if gate else 0,
        hard_total=len(hard),
        gate=gate,
    )


TRAVELPLANNER_RATES: tuple[str, ...] = (
    "delivery_rate", "commonsense_micro", "commonsense_macro", "hard_micro", "hard_macro",
    "final_pass",
)


def travelplanner_rates(plans: Sequence[PlanCounts]) -> dict[str, float]:
    """TravelPlanner's six rates over a set of plans, one plan per query.

    Every denominator is the whole query set (an undelivered plan passes nothing). The
    micro rates are pooled: passed instances over all instances of all queries, not a mean
    of per-plan shares (the suite's per-sample ``micro``). Macro rates are the share of
    queries whose plan passes every constraint of the class; the final pass rate, every
    constraint of both, equals the suite's feasibility. NaN where a denominator is 0.
    """
    n = len(plans)

    def share(num: float, den: float) -> float:
        return num / den if den else math.nan

    return {
        "delivery_rate": share(sum(p.delivered for p in plans), n),
        "commonsense_micro": share(sum(p.commonsense_passed for p in plans),
                                   sum(p.commonsense_total for p in plans)),
        "commonsense_macro": share(sum(p.commonsense_all for p in plans), n),
        "hard_micro": share(sum(p.hard_passed for p in plans), sum(p.hard_total for p in plans)),
        "hard_macro": share(sum(p.hard_all for p in plans), n),
        "final_pass": share(sum(p.commonsense_all and p.hard_all for p in plans), n),
    }
