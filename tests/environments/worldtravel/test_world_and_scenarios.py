"""WorldTravel world, scenario set, CP-SAT oracle and checker (no Inspect here)."""

from __future__ import annotations

import ast
import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from environments.worldtravel import stats as stats_cli
from environments.worldtravel.agents import greedy_plan, random_plan
from environments.worldtravel.analysis import BUCKETS
from environments.worldtravel.checker import check_plan
from environments.worldtravel.model import (
    Attraction,
    Hotel,
    Restaurant,
    World,
    hhmm,
    open_intervals,
)
from environments.worldtravel.scenario import BASE_KINDS, KINDS, Constraint, Scenario
from environments.worldtravel.scenarios import generate_scenario
from environments.worldtravel.solver import _Model, _solver, count_plans, coupling, solve
from environments.worldtravel.store import (
    DATA_DIR,
    SCENARIO_FILE,
    WORLD_FILE,
    dumps,
    shipped_scenarios,
    shipped_world,
)
from environments.worldtravel.world import generate_world

PACKAGE = Path(__file__).parents[3] / "environments" / "worldtravel"


@pytest.fixture(scope="module")
def world() -> World:
    return shipped_world()


@pytest.fixture(scope="module")
def scenarios() -> tuple[Scenario, ...]:
    return shipped_scenarios()


def test_world_is_byte_for_byte_deterministic_and_matches_the_shipped_file() -> None:
    a, b = generate_world(0), generate_world(0)
    assert dumps(a.to_record()) == dumps(b.to_record())
    shipped = (DATA_DIR / WORLD_FILE).read_text(encoding="utf-8")
    assert dumps(a.to_record()) + "\n" == shipped
    assert dumps(generate_world(1).to_record()) != dumps(a.to_record())
    assert World.from_record(json.loads(shipped)) == a


def test_world_is_internally_consistent(world: World) -> None:
    assert len(world.cities) == 5
    for city in world.cities:
        n = len(city.nodes)
        assert city.nodes[-1] == city.station
        for mode in ("walk", "transit", "taxi"):
            assert all(city.times[mode][i][i] == 0 for i in range(n))
        # a taxi is never slower than walking, and walking is free of charge
        assert all(
            city.times["taxi"][i][j] <= city.times["walk"][i][j] + 3
            for i in range(n)
            for j in range(n)
        )
    venues: list[Hotel | Restaurant | Attraction] = [
        *world.hotels,
        *world.restaurants,
        *world.attractions,
    ]
    for venue in venues:
        assert world.city(venue.city).nodes[venue.location] == venue.id
    for link in world.links:
        assert link.origin != link.destination and link.depart < link.arrive < 24 * 60
        assert any(link.weekdays)
    for hotel in world.hotels:
        assert all(len(p) == world.n_dates for p in hotel.prices.values())


def test_shipped_set_meets_the_acceptance_numbers(
    world: World, scenarios: tuple[Scenario, ...]
) -> None:
    stats = stats_cli.summarize(world, list(scenarios))
    assert stats["scenarios"] == 150 and stats["cities"] == 5
    assert stats["mean_constraints"] >= 15
    assert stats["min_constraints"] <= 9 and stats["max_constraints"] >= 30
    assert stats["feasible"] == 150  # every scenario has a CP-SAT plan
    assert stats["checker_agrees"] == 150  # and the independent checker accepts every one
    counts = {s.n_constraints for s in scenarios}
    assert set(range(9, 31)) <= counts  # every count of the horizon curve is represented
    assert set(stats["kinds"]) == set(KINDS)  # every constraint kind occurs
    assert len({s.family for s in scenarios}) == 5
    assert all(sum(s.family == f for s in scenarios) == 30 for f in {s.family for s in scenarios})
    assert len({s.id for s in scenarios}) == 150


def test_shipped_set_is_coupled_and_length_independent(
    world: World, scenarios: tuple[Scenario, ...]
) -> None:
    """Issue 19's acceptance numbers, as properties of the shipped data."""
    stats = stats_cli.summarize(world, list(scenarios))
    assert stats["min_global_constraints"] >= 3
    assert all(s.n_global >= 3 for s in scenarios)
    assert stats["greedy_feasible"] <= 0.10
    assert stats["random_feasible"] == 0.0
    assert stats["oracle_feasible"] == 1.0
    for name, row in stats["by_bucket"].items():
        assert row["greedy"] <= 0.10, name  # in every count bucket, not only overall
        assert row["oracle"] == 1.0, name
    # every count bucket the report uses holds 1- to 4-day trips
    table = stats["by_count_and_days"]
    assert set(table) == {f"{lo}-{hi}" for lo, hi in BUCKETS}
    for name, per_days in table.items():
        assert set(per_days) == {"1", "2", "3", "4"}, name
    # base constraints are one instance per trip: a count does not grow with the days
    for s in scenarios:
        base = [c for c in s.constraints if c.kind in BASE_KINDS]
        assert len(base) == (5 if s.days == 1 else 6) and all("day" not in c.params for c in base)
    # plans_found spreads (exact counts up to the cap), and the diagnostic is recorded
    plans = stats["plans_found"]
    assert plans["max"] == plans["cap"] >= 1000
    assert sum(n > 0 for n in plans["decades"].values()) >= 4
    assert plans["at_cap"] < 150 / 2
    # a count is a real count (or a lower bound): the reference plan is always one
    assert all(s.plans_found >= 1 for s in scenarios)
    assert plans["exact"] == sum(bool(s.meta["plans_exact"]) for s in scenarios)
    assert all(s.plans_found < s.plan_cap for s in scenarios if s.meta["plans_exact"])
    assert stats["coupling"]["scenarios"] == 150
    # the diagnostic reports only proven minima; unresolved candidates are counted
    for s in scenarios:
        d = s.coupling
        assert d["resolved"] + d["unresolved"] == d["choices"]
        assert d["exact"] == (d["unresolved"] == 0)
        assert d["fatal"] + d["dead"] <= d["resolved"]
    assert stats["coupling"]["with_a_fatal_first_choice"] >= 50


@pytest.mark.slow
def test_stats_cli_prints_the_documented_json(capsys: pytest.CaptureFixture[str]) -> None:
    # the family's plans take minutes on all 150 (run by the README's command); the JSON
    # contract without them, the family section on a subset in test_planner_family.py
    assert stats_cli.main(["--json", "--no-family"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {
        "scenarios",
        "cities",
        "mean_constraints",
        "min_constraints",
        "max_constraints",
        "feasible",
        "kinds",
        "greedy_feasible",
        "random_feasible",
        "oracle_feasible",
        "min_global_constraints",
        "mean_global_constraints",
        "by_count_and_days",
        "by_bucket",
        "coupling",
        "plans_found",
        "fact_modalities",
        "redraws",
        "family_draws",
        "decoy_globals",
    } <= set(out)
    assert out["scenarios"] == 150
    facts = out["fact_modalities"]  # the Webscape site's inventory, by modality
    assert facts["text"] + facts["layout"] + facts["image"] == facts["total"] > 0
    assert facts["image"] > 0 and sum(facts["by_medium"].values()) == facts["total"]
    assert {"cap", "min", "median", "max", "at_cap", "decades"} <= set(out["plans_found"])


def test_stats_takes_extra_sections(world: World, scenarios: tuple[Scenario, ...]) -> None:
    """The hook other modules use to add a section (e.g. Webscape's fact modalities)."""
    out = stats_cli.summarize(world, list(scenarios[:3]),
                              sections={"extra": lambda w, ss: len(ss)})
    assert out["extra"] == 3 and out["scenarios"] == 3


def test_scenarios_regenerate_byte_for_byte(world: World, scenarios: tuple[Scenario, ...]) -> None:
    lines = (DATA_DIR / SCENARIO_FILE).read_text(encoding="utf-8").splitlines()
    small = [i for i, s in enumerate(scenarios) if s.days == 1][:2]
    for i in small:
        assert dumps(generate_scenario(generate_world(0), 0, i).to_record()) == lines[i]


@pytest.mark.slow
def test_a_two_city_scenario_regenerates_byte_for_byte(scenarios: tuple[Scenario, ...]) -> None:
    lines = (DATA_DIR / SCENARIO_FILE).read_text(encoding="utf-8").splitlines()
    i = next(i for i, s in enumerate(scenarios) if len(s.cities) == 2)
    assert dumps(generate_scenario(generate_world(0), 0, i).to_record()) == lines[i]


def test_budget_just_below_the_reference_cost_is_infeasible(
    world: World, scenarios: tuple[Scenario, ...]
) -> None:
    """Exactness: the reference plan is optimal, so one unit less budget has no plan."""
    sc = next(s for s in scenarios if s.days == 1 and s.reference_cost and s.optimal)
    assert sc.reference_cost is not None
    tight = Constraint("cx", "budget_total", {"amount": sc.reference_cost}, "")
    ok = solve(world, sc, list(sc.constraints) + [tight])
    assert ok.feasible and ok.cost == sc.reference_cost
    assert check_plan(world, sc, ok.plan)["feasible"]
    below = Constraint("cx", "budget_total", {"amount": sc.reference_cost - 1}, "")
    assert not solve(world, sc, list(sc.constraints) + [below]).feasible


def test_fresh_solve_agrees_with_the_checker_under_extra_constraints(
    world: World, scenarios: tuple[Scenario, ...]
) -> None:
    sc = next(s for s in scenarios if s.days == 1)
    plan = sc.reference_plan
    assert plan is not None
    first = next(s for s in plan["days"][0]["stops"] if s["kind"] == "attraction")
    extra = [
        Constraint("x1", "exclude", {"id": first["id"]}, ""),
        Constraint("x2", "transport_mode", {"scope": "local", "forbid": "walk"}, ""),
    ]
    # the base constraints only: the shipped budgets are tight by design
    kept = [c for c in sc.constraints if c.kind in BASE_KINDS] + extra
    res = solve(world, sc, kept)
    assert res.feasible and res.plan is not None  # taxis and transit still reach everything
    report = check_plan(world, Scenario(**{**sc.__dict__, "constraints": kept}), res.plan)
    assert report["feasible"], [r for r in report["results"] if not r["passed"]]
    stops = [s for d in res.plan["days"] for s in d["stops"]]
    assert all(s["id"] != first["id"] for s in stops)
    assert all(s.get("transport_to_next") != "walk" for s in stops)


def _results(report: dict[str, object]) -> dict[str, dict[str, object]]:
    return {r["id"]: r for r in report["results"]}  # type: ignore[attr-defined,index]


def test_malformed_plans_fail_what_they_break_with_reasons(
    world: World, scenarios: tuple[Scenario, ...]
) -> None:
    sc = next(s for s in scenarios if s.days >= 3)
    assert sc.reference_plan is not None
    # bad JSON: not delivered, everything fails, nothing raises
    report = check_plan(world, sc, "{'days': oops")
    assert not report["delivered"] and report["passed"] == 0
    assert all(r["reason"] for r in report["results"])
    # a missing day: that day's constraints fail, the other days' still pass
    plan = json.loads(json.dumps(sc.reference_plan))
    plan["days"] = [d for d in plan["days"] if d["day"] != 2]
    report = check_plan(world, sc, json.dumps(plan))
    assert report["delivered"] and not report["feasible"]
    by_id = _results(report)
    for c in sc.constraints:
        if c.params.get("day") == 2 or c.kind in ("skeleton", "opening_hours", "travel_time"):
            # per-day constraints of day 2, and the per-trip base checks (every day)
            assert not by_id[c.id]["passed"] and "day 2" in str(by_id[c.id]["reason"])
        if c.params.get("day") == 1 and c.kind in ("meal_window", "visit_window"):
            assert by_id[c.id]["passed"]
    # the same base check on one day (how older files stated it) passes day 1
    for kind in ("opening_hours", "travel_time"):
        one = Constraint("d1", kind, {"day": 1}, "")
        day1 = Scenario(**{**sc.__dict__, "constraints": [one]})
        assert check_plan(world, day1, json.dumps(plan))["feasible"]
    # an unknown id
    plan = json.loads(json.dumps(sc.reference_plan))
    stop = next(s for s in plan["days"][0]["stops"] if s["kind"] == "attraction")
    stop["id"] = "NOPE-A99"
    report = check_plan(world, sc, plan)
    failed = [r for r in report["results"] if not r["passed"]]
    assert failed and any("NOPE-A99" in r["reason"] for r in failed)
    # overlapping times: a stop starting before the previous one ends
    plan = json.loads(json.dumps(sc.reference_plan))
    stops = plan["days"][0]["stops"]
    stops[2]["start"] = stops[1]["start"]
    report = check_plan(world, sc, plan)
    travel = next(c for c in sc.constraints if c.kind == "travel_time")
    assert not _results(report)[travel.id]["passed"]
    # wrong types everywhere still yield a full report
    junks: list[Any] = [
        [],
        42,
        None,
        {"days": "x"},
        {"days": [1, {"day": "1"}]},
        {"days": [{"day": 1, "stops": [None, 3, {"kind": 5}]}], "lodging": "x"},
    ]
    for junk in junks:
        report = check_plan(world, sc, junk)
        assert report["total"] == sc.n_constraints and not report["feasible"]


def test_fenced_json_is_accepted(world: World, scenarios: tuple[Scenario, ...]) -> None:
    sc = scenarios[0]
    text = "Here is the plan:\n```json\n" + json.dumps(sc.reference_plan) + "\n```"
    assert check_plan(world, sc, text)["feasible"]


def _one_stop_scenario(world: World, constraints: list[Constraint]) -> Scenario:
    """A 1-day trip in Brisa with a single attraction stop (small enough to enumerate)."""
    base = [Constraint(f"b{k}", kind, {}, "") for k, kind in enumerate(BASE_KINDS[:5])]
    return Scenario(
        id="hand-1", family="BRI", cities=["BRI"], start_date=world.first_date, days=1,
        party=1, arrival=9 * 60, departure=21 * 60, transfer_day=None,
        skeleton=[["attraction"]], constraints=base + constraints,
    )


def test_coupling_diagnostic_on_a_hand_built_case(world: World) -> None:
    """One stop, two global constraints: a museum is required and exactly one of a museum
    and a park. The diagnostic must find, per first choice, the least number of global
    constraints any plan starting there breaks; here the plan is the choice (plus modes),
    so the checker on the earliest plan per choice is the brute-force answer."""
    sights = [a for a in world.attractions if a.city == "BRI"]
    museum = next(a for a in sights if a.category == "museum")
    park = next(a for a in sights if a.category == "park")
    glob = [
        Constraint("g1", "count", {"category": "museum", "op": "at_least", "n": 1}, ""),
        Constraint("g2", "either_or", {"a": museum.id, "b": park.id}, ""),
    ]
    sc = _one_stop_scenario(world, glob)
    diag = coupling(world, sc)
    assert diag["exact"] and diag["slot"] == "day 1 stop 1 (attraction)"
    # brute force: every sight as the stop, every pair of modes, earliest times
    city = world.city("BRI")
    station = len(city.nodes) - 1
    brute: list[int] = []
    for a in sights:
        report = None
        for there, back in itertools.product(("walk", "transit", "taxi"), repeat=2):
            arrive = 9 * 60 + city.times[there][station][a.location]
            starts = [
                t
                for lo, hi in open_intervals(a, sc.start_date)
                for t in (a.timed_entry or [max(arrive, lo)])
                if t >= arrive and lo <= t and t + a.visit_minutes <= hi
            ]
            if not starts:
                continue
            start = min(starts)
            end = start + a.visit_minutes
            home = end + city.times[back][a.location][station]
            plan = {"lodging": [], "days": [{"day": 1, "stops": [
                {"kind": "station", "id": city.station, "end": hhmm(9 * 60),
                 "transport_to_next": there},
                {"kind": "attraction", "id": a.id, "start": hhmm(start), "end": hhmm(end),
                 "transport_to_next": back},
                {"kind": "station", "id": city.station, "start": hhmm(min(home, 1439))}]}]}
            got = _results(check_plan(world, sc, plan))
            if all(got[c.id]["passed"] for c in sc.constraints if c.id.startswith("b")):
                report = got
                break
        if report is not None:
            brute.append(sum(not report[g.id]["passed"] for g in glob))
    assert diag["choices"] - diag["dead"] == len(brute)
    assert diag["max_violated"] == max(brute) == 2  # a non-museum, non-park: both break
    assert diag["fatal"] == sum(k >= 1 for k in brute)
    assert diag["mean_violated"] == pytest.approx(sum(brute) / len(brute), abs=1e-3)


def test_plan_count_by_enumeration_matches_no_good_cuts(world: World) -> None:
    """The earliest-schedule enumeration counts each plan once: it equals re-solving
    with a no-good cut per plan (places and modes) on the ordinary model."""
    from ortools.sat.python import cp_model

    sc = _one_stop_scenario(world, [
        Constraint("g1", "count", {"category": "museum", "op": "at_least", "n": 1}, ""),
        Constraint("g2", "walk_limit", {"minutes": 25}, ""),
    ])
    counted = count_plans(world, sc, cap=500)
    model = _Model(world, sc, sc.constraints)
    keys = model.decisions() + [v for g in model.legs for v in g.y]
    n = 0
    while n < 500:
        s = _solver()
        if s.solve(model.m) not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            break
        n += 1
        model.m.add_bool_or([v.Not() if s.value(v) else v for v in keys])
    assert counted.exact and 1 < counted.plans == n < 500
    # a known plan is one of the enumerated ones: adding it changes nothing when exact,
    # and keeps a count that stops early from reporting 0
    known = solve(world, sc).plan
    assert known is not None
    assert count_plans(world, sc, cap=500, known=(known,)).plans == n
    assert count_plans(world, sc, cap=500, limit=0.0, known=(known,)).plans >= 1
    assert count_plans(world, sc, cap=3).plans == 3 and not count_plans(world, sc, cap=3).exact


def test_greedy_plans_fail_a_global_constraint_by_construction(
    world: World, scenarios: tuple[Scenario, ...]
) -> None:
    """The greedy plan is one of the generator's decoys (issue 47: with the exact local
    shortcuts): each shipped greedy plan breaks at least one constraint, and the
    generator recorded which kinds."""
    for sc in scenarios[:40]:
        report = check_plan(world, sc, greedy_plan(world, sc))
        failed = sorted(r["kind"] for r in report["results"] if not r["passed"])
        assert failed and failed == sc.meta["decoys_fail"]["greedy"], sc.id


def test_random_plans_are_delivered_but_rarely_feasible(
    world: World, scenarios: tuple[Scenario, ...]
) -> None:
    reports = [check_plan(world, sc, random_plan(world, sc)) for sc in scenarios[:40]]
    assert all(r["delivered"] for r in reports)
    assert sum(r["feasible"] for r in reports) <= 4


def test_environment_never_imports_inspect() -> None:
    for path in PACKAGE.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            assert not any(n.startswith("inspect_ai") for n in names), path
