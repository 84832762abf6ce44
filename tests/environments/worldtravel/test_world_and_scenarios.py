"""WorldTravel world, scenario set, CP-SAT oracle and checker (no Inspect here)."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from environments.worldtravel import stats as stats_cli
from environments.worldtravel.agents import greedy_plan, random_plan
from environments.worldtravel.analysis import bucket
from environments.worldtravel.checker import check_plan
from environments.worldtravel.model import Attraction, Hotel, Restaurant, World
from environments.worldtravel.scenario import KINDS, Constraint, Scenario
from environments.worldtravel.scenarios import generate_scenario
from environments.worldtravel.solver import solve
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
    assert stats["min_constraints"] <= 6 and stats["max_constraints"] >= 30
    assert stats["feasible"] == 150  # every scenario has a CP-SAT plan
    assert stats["checker_agrees"] == 150  # and the independent checker accepts every one
    counts = {s.n_constraints for s in scenarios}
    assert set(range(5, 31)) <= counts  # every count of the horizon curve is represented
    assert set(stats["kinds"]) == set(KINDS)  # every constraint kind occurs
    assert len({s.family for s in scenarios}) == 5
    assert all(sum(s.family == f for s in scenarios) == 30 for f in {s.family for s in scenarios})
    assert len({s.id for s in scenarios}) == 150


def test_stats_cli_prints_the_documented_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert stats_cli.main(["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {
        "scenarios",
        "cities",
        "mean_constraints",
        "min_constraints",
        "max_constraints",
        "feasible",
        "kinds",
    } <= set(out)
    assert out["scenarios"] == 150


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
    sc = next(s for s in scenarios if s.days == 1 and s.reference_cost)
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
    res = solve(world, sc, list(sc.constraints) + extra)
    assert res.feasible and res.plan is not None  # taxis and transit still reach everything
    report = check_plan(
        world, Scenario(**{**sc.__dict__, "constraints": list(sc.constraints) + extra}), res.plan
    )
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
        if c.params.get("day") == 2:
            assert not by_id[c.id]["passed"] and "day 2" in str(by_id[c.id]["reason"])
        if c.params.get("day") == 1 and c.kind in ("opening_hours", "travel_time"):
            assert by_id[c.id]["passed"]
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
    travel = next(c for c in sc.constraints if c.kind == "travel_time" and c.params["day"] == 1)
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


def test_greedy_fails_more_as_constraints_grow(
    world: World, scenarios: tuple[Scenario, ...]
) -> None:
    rates: dict[str, list[bool]] = {}
    for sc in scenarios:
        rates.setdefault(bucket(sc.n_constraints), []).append(
            check_plan(world, sc, greedy_plan(world, sc))["feasible"]
        )
    low, high = rates["5-9"], rates["25-30"]
    assert sum(low) / len(low) > sum(high) / len(high)
    assert sum(high) / len(high) < 0.5


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
