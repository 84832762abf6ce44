"""Issue 47: the reference-planner family, the generator built against it, the empty-plan
rule and the standardised logistic fit.

The family's feasibility on the whole set takes minutes (``harness worldtravel stats
--json``); here a few scenarios of every trip length are planned by every member, and the
rest is checked from what the generator recorded."""

from __future__ import annotations

import numpy as np
import pytest

from environments.worldtravel import analysis
from environments.worldtravel.checker import EMPTY_REASON, check_plan
from environments.worldtravel.model import World
from environments.worldtravel.planners import (
    GLOBAL_BLIND,
    PLANNERS,
    _Prefix,
    decoy_plans,
    local_constraints,
    sampled_globals,
)
from environments.worldtravel.scenario import GLOBAL_KINDS, Constraint, Scenario
from environments.worldtravel.stats import draws_summary, redraw_summary
from environments.worldtravel.store import shipped_scenarios, shipped_world
from harness.stats import logistic_effects


@pytest.fixture(scope="module")
def world() -> World:
    return shipped_world()


@pytest.fixture(scope="module")
def scenarios() -> tuple[Scenario, ...]:
    return shipped_scenarios()


NONSENSE = {"lodging": [], "days": [{"day": 1, "stops": [
    {"kind": "attraction", "id": "NOWHERE-1", "start": "99:99", "end": "-1"}]}]}


def test_a_constant_nonsense_plan_scores_zero_on_every_micro_rate(
    world: World, scenarios: tuple[Scenario, ...]
) -> None:
    """One unknown stop with impossible times, for every scenario: no constraint passes
    vacuously (before the rule, exclusions, cuisines, walking limits... did)."""
    reports = [check_plan(world, s, NONSENSE) for s in scenarios]
    assert all(r["delivered"] and r["passed"] == 0 for r in reports)
    assert all(x["reason"] == EMPTY_REASON for r in reports for x in r["results"])
    rates = analysis.travelplanner_rates(
        [analysis.plan_counts(r["delivered"], r["results"]) for r in reports]
    )
    assert rates["commonsense_micro"] == rates["hard_micro"] == 0.0
    assert np.mean([r["passed"] / r["total"] for r in reports]) == 0.0
    # an undelivered answer passes nothing either, and a real plan is unaffected
    assert check_plan(world, scenarios[0], "no plan at all")["passed"] == 0
    assert check_plan(world, scenarios[0], scenarios[0].reference_plan)["feasible"]


def test_a_plan_naming_one_real_venue_is_checked_normally(
    world: World, scenarios: tuple[Scenario, ...]
) -> None:
    sc = scenarios[0]
    real = next(s for s in sc.reference_plan["days"][0]["stops"] if s["kind"] == "attraction")
    plan = {"lodging": [], "days": [{"day": 1, "stops": [dict(real)]}]}
    report = check_plan(world, sc, plan)
    assert all(x["reason"] != EMPTY_REASON for x in report["results"])


def test_the_global_blind_members_fail_every_scenario_as_recorded(
    world: World, scenarios: tuple[Scenario, ...]
) -> None:
    """The generator computed the global-blind members' plans (its decoys) and kept only
    draws that all of them fail; recomputing them gives the same verdicts (planning is
    deterministic), on a sample of every trip length."""
    for sc in scenarios[:12]:
        for name, plan in decoy_plans(world, sc).items():
            report = check_plan(world, sc, plan)
            failed = sorted(r["kind"] for r in report["results"] if not r["passed"])
            assert failed and failed == sc.meta["decoys_fail"][name], (sc.id, name)
    assert all(set(s.meta["decoys_fail"]) == set(GLOBAL_BLIND) for s in scenarios)


@pytest.mark.slow
def test_every_member_fails_a_sample_and_the_oracle_passes(
    world: World, scenarios: tuple[Scenario, ...]
) -> None:
    sample = [s for s in scenarios if s.days == 1][:2] + [s for s in scenarios if s.days > 1][:3]
    for sc in sample:
        assert check_plan(world, sc, sc.reference_plan)["feasible"]
        for name, planner in PLANNERS.items():
            plan = planner(world, sc)
            report = check_plan(world, sc, plan)
            assert report["delivered"] and not report["feasible"], (sc.id, name)


def test_shortcut_plans_satisfy_every_local_constraint(
    world: World, scenarios: tuple[Scenario, ...]
) -> None:
    """What makes them shortcuts and not bad planners: each exact shortcut passes every
    non-global constraint and fails only global ones."""
    for sc in scenarios[:8]:
        for name, plan in decoy_plans(world, sc).items():
            if name == "greedy":
                continue
            report = check_plan(world, sc, plan)
            kinds = {r["kind"] for r in report["results"] if not r["passed"]}
            assert kinds and kinds <= set(GLOBAL_KINDS), (sc.id, name, kinds)


def test_prefix_model_states_violations_not_obligations(world: World) -> None:
    """A visible 'then' needs its 'first' earlier; an unvisited pair owes nothing."""
    sc = next(s for s in shipped_scenarios() if s.days == 1)
    sights = [a.id for a in world.attractions if a.city == sc.cities[0]]
    prec = Constraint("g1", "precedence", {"first": sights[0], "then": sights[1]}, "")
    probe = Scenario(**{**sc.__dict__, "constraints": local_constraints(sc) + [prec]})
    from ortools.sat.python import cp_model

    from environments.worldtravel.solver import _solver

    full = _Prefix(world, probe, 1)
    first_pos = next(q for q in full.pos if q.slot == "attraction")
    then_lit = next(v for r, v in zip(first_pos.cands, first_pos.x, strict=True)
                    if r.id == sights[1])
    full.m.add(then_lit == 1)  # 'then' at the trip's first sight: nothing can precede it
    order = [q for q in full.pos if q.x]
    if order.index(first_pos) < full.upto:
        assert _solver(1.0).solve(full.m) == cp_model.INFEASIBLE
    blind = _Prefix(world, probe, 0)  # nothing visible: the precedence says nothing
    assert _solver(1.0).solve(blind.m) in (cp_model.OPTIMAL, cp_model.FEASIBLE)


def test_beam_checks_every_other_global(scenarios: tuple[Scenario, ...]) -> None:
    sc = max(scenarios, key=lambda s: s.n_global)
    globals_ = [c for c in sc.constraints if c.kind in GLOBAL_KINDS]
    assert sampled_globals(sc) == globals_[::2] and 0 < len(sampled_globals(sc)) < len(globals_)


def test_redraws_and_draws_are_reported(scenarios: tuple[Scenario, ...]) -> None:
    redraws = redraw_summary(list(scenarios))
    assert redraws["total"] == sum(sum(s.meta["redraws"].values()) for s in scenarios)
    # the shipped draw of every scenario is its last recorded draw, and nobody passed it
    assert all(s.meta["family_draws"] and s.meta["family_draws"][-1] == [] for s in scenarios)
    draws = draws_summary(list(scenarios))
    assert draws["draws"] == sum(len(s.meta["family_draws"]) for s in scenarios)
    assert set(PLANNERS) <= set(draws)


def test_the_diagnostic_finds_a_doomed_first_choice_almost_everywhere(
    scenarios: tuple[Scenario, ...]
) -> None:
    doomed = [s.coupling["doomed"] > 0 for s in scenarios]
    assert sum(doomed) >= 0.9 * len(scenarios)
    for s in scenarios:
        d = s.coupling
        assert d["fatal"] <= d["doomed"] <= d["choices"] - d["dead"]


def test_logistic_effects_name_the_stronger_predictor() -> None:
    rng = np.random.default_rng(0)
    count = rng.integers(8, 31, 600)
    days = rng.integers(1, 5, 600)
    y = rng.random(600) < 1 / (1 + np.exp(-(4 - 0.3 * count)))
    fit = logistic_effects(y.astype(float), {"count": count, "days": days})
    assert fit["count"]["coef"] is not None and fit["days"]["coef"] is not None
    assert fit["count"]["high"] < 0  # falls with the count
    assert abs(fit["count"]["coef"]) > abs(fit["days"]["coef"])
    assert fit["days"]["low"] < 0 < fit["days"]["high"]  # no length effect in the data
    flat = logistic_effects(y.astype(float), {"count": count, "const": np.ones(600)})
    assert flat["const"]["coef"] is None


@pytest.mark.slow
def test_family_section_of_stats(scenarios: tuple[Scenario, ...]) -> None:
    """The ``family`` section (what ``stats --json`` prints for all 150) on 4 scenarios:
    every member, its feasibility by bucket and length, TravelPlanner rates, the fit."""
    from environments.worldtravel.stats import family_results, family_summary
    from harness.stats import logistic_effects  # the fitter the CLI hands in

    subset = [s for s in scenarios if s.days <= 2][:4]
    results = family_results(subset)
    assert all(row["fit"] is None for row in family_summary(subset, results).values())
    out = family_summary(subset, results, fit=logistic_effects)
    assert set(out) == set(PLANNERS)
    for row in out.values():
        assert row["feasible"] == 0.0 and row["n_feasible"] == 0
        assert set(row["by_days"]) == {str(s.days) for s in subset}
        assert row["travelplanner"]["delivery_rate"] == 1.0
        assert row["travelplanner"]["final_pass"] == 0.0
        assert {"count", "days"} == set(row["fit"])
    # the graded response (difficulty_fit) on the same real plans: global constraints
    # counted from the scenario, and off the floor (feasibility is at 0 here)
    from environments.worldtravel.stats import difficulty_fit
    from harness.stats import fractional_logit_effects

    graded = difficulty_fit(subset, results, fractional_logit_effects)
    assert set(graded["members"]) == set(PLANNERS)
    for name, rows in results.items():
        for s, (_, micro, _, (passed, total)) in zip(subset, rows, strict=True):
            assert total == s.n_global and 0 <= passed <= total
            if name.startswith("shortcut"):  # exact on every non-global constraint
                assert round(micro * s.n_constraints) == s.n_constraints - total + passed
        row = graded["members"][name]["global"]
        assert 0 < row["mean"] < 1 and row["at_ceiling"] < len(subset)
    assert graded["pooled"]["global"]["count"] is not None
