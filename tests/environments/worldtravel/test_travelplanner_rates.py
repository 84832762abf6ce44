"""TravelPlanner's six rates over checker reports: classes, the gate, pooled micro."""

from __future__ import annotations

import json

import pytest

from environments.worldtravel.analysis import (
    COMMONSENSE_KINDS,
    constraint_class,
    plan_counts,
    travelplanner_rates,
)
from environments.worldtravel.checker import check_plan
from environments.worldtravel.scenario import KINDS
from environments.worldtravel.store import shipped_scenarios, shipped_world


def _row(kind: str, passed: bool) -> dict[str, object]:
    return {"kind": kind, "passed": passed}


def test_every_kind_has_a_class_and_base_kinds_are_commonsense() -> None:
    assert COMMONSENSE_KINDS <= set(KINDS)
    assert {constraint_class(k) for k in KINDS} == {"commonsense", "hard"}
    assert constraint_class("budget_total") == "hard"
    assert constraint_class("opening_hours") == "commonsense"


def test_micro_is_pooled_and_macro_counts_whole_plans() -> None:
    # plan A: 1 of 1 commonsense, 0 of 1 hard; plan B: 3 of 4 commonsense, 3 of 3 hard
    a = plan_counts(True, [_row("skeleton", True), _row("budget_total", False)])
    b = plan_counts(True, [_row("skeleton", True), *[_row("opening_hours", True)] * 2,
                           _row("travel_time", False), *[_row("count", True)] * 3])
    rates = travelplanner_rates([a, b])
    assert rates["commonsense_micro"] == pytest.approx(4 / 5)  # a mean of shares: 0.875
    assert rates["hard_micro"] == pytest.approx(3 / 4)  # a mean of shares: 0.5
    assert rates["commonsense_macro"] == 0.5 and rates["hard_macro"] == 0.5
    assert rates["final_pass"] == 0.0 and rates["delivery_rate"] == 1.0


def test_a_plan_failing_the_skeleton_passes_no_hard_constraint() -> None:
    gated = plan_counts(True, [_row("skeleton", False), _row("cuisine", True)])
    assert gated.hard_passed == 0 and not gated.hard_all
    undelivered = plan_counts(False, [_row("skeleton", True), _row("cuisine", True)])
    assert undelivered.commonsense_passed == 0 and undelivered.hard_passed == 0
    rates = travelplanner_rates([gated, undelivered])
    assert rates["delivery_rate"] == 0.5 and rates["hard_micro"] == 0.0
    assert travelplanner_rates([])["final_pass"] != travelplanner_rates([])["final_pass"]  # NaN


def test_on_real_plans_final_pass_is_feasibility() -> None:
    world, scenarios = shipped_world(), shipped_scenarios()[:12]
    plans, feasible = [], []
    for i, sc in enumerate(scenarios):
        plan = dict(sc.reference_plan)
        if i % 3 == 1:  # break one day's lunch: a hard or commonsense constraint fails
            plan = json.loads(json.dumps(plan).replace('"lunch"', '"dinner"', 1))
        if i % 3 == 2:
            plan = {}
        report = check_plan(world, sc, json.dumps(plan) if plan else "no plan")
        plans.append(plan_counts(report["delivered"], report["results"]))
        feasible.append(report["feasible"])
    rates = travelplanner_rates(plans)
    assert rates["final_pass"] == pytest.approx(sum(feasible) / len(feasible))
    assert rates["delivery_rate"] == pytest.approx(8 / 12)
    assert 0 < rates["final_pass"] < 1
