"""The generate/check command lines, the query layer, and a fuzz test of the checker."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from environments.worldtravel import check as check_cli
from environments.worldtravel import generate as generate_cli
from environments.worldtravel import queries
from environments.worldtravel.analysis import feasibility_by_bucket, macro_by_kind
from environments.worldtravel.checker import check_plan
from environments.worldtravel.store import (
    DATA_DIR,
    SCENARIO_FILE,
    WORLD_FILE,
    read_scenarios,
    shipped_scenarios,
    shipped_world,
)


def test_check_cli_prints_a_per_constraint_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sc = shipped_scenarios()[3]
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(sc.reference_plan), encoding="utf-8")
    assert check_cli.main(["--scenario", sc.id, "--plan", str(plan)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["feasible"] and len(report["results"]) == sc.n_constraints
    assert all({"id", "kind", "category", "passed", "reason"} <= set(r) for r in report["results"])
    plan.write_text("this is not json", encoding="utf-8")
    assert check_cli.main(["--scenario", sc.id, "--plan", str(plan)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert not report["delivered"] and report["passed"] == 0
    assert check_cli.main(["--scenario", "nope", "--reference"]) == 2


def test_generate_cli_writes_the_same_bytes_as_the_shipped_set(tmp_path: Path) -> None:
    scenarios = shipped_scenarios()
    index = next(i for i, s in enumerate(scenarios) if s.days == 1)
    assert generate_cli.main(["--seed", "0", "--out", str(tmp_path), "--indices", str(index)]) == 0
    assert (tmp_path / WORLD_FILE).read_bytes() == (DATA_DIR / WORLD_FILE).read_bytes()
    shipped = (DATA_DIR / SCENARIO_FILE).read_text(encoding="utf-8").splitlines()[index]
    assert (tmp_path / SCENARIO_FILE).read_text(encoding="utf-8") == shipped + "\n"
    assert read_scenarios(tmp_path)[0] == scenarios[index]


def test_queries_expose_facts_only_on_request() -> None:
    world = shipped_world()
    hits = queries.search_attractions(world, "AVA", category="museum")
    assert hits and all(h["category"] == "museum" for h in hits)
    assert "hours" not in hits[0]  # summaries only: hours need get_details
    detail = queries.details(world, hits[0]["id"])
    assert set(detail["hours"]) == {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}
    station = world.city("AVA").station
    trip = queries.travel(world, hits[0]["id"], station)
    assert trip["walk"]["price"] == 0 and trip["taxi"]["minutes"] <= trip["walk"]["minutes"] + 3
    with pytest.raises(queries.QueryError):
        queries.details(world, "NOPE")
    with pytest.raises(queries.QueryError):
        queries.search_hotels(world, "Atlantis")


def test_analysis_buckets_and_macro() -> None:
    # the fitted horizon moved to benchmarks/worldtravel (test_worldtravel_horizon.py)
    counts = [n for n in range(5, 31) for _ in range(6)]
    falling = [1.0 if n < 15 else 0.0 for n in counts]
    table = feasibility_by_bucket(counts, falling)
    assert table["5-9"] == 1.0 and table["25-30"] == 0.0
    rows = [
        [{"kind": "a", "passed": True}, {"kind": "a", "passed": False}],
        [{"kind": "a", "passed": True}, {"kind": "b", "passed": True}],
    ]
    assert macro_by_kind(rows) == {"a": 0.5, "b": 1.0}


_VALUES = st.one_of(
    st.none(),
    st.integers(-5, 3000),
    st.text(max_size=6),
    st.sampled_from(["09:00", "25:99", "walk", "taxi", "hotel", "link"]),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_checker_never_crashes_on_mutated_plans(data: st.DataObject) -> None:
    world = shipped_world()
    sc = data.draw(st.sampled_from(shipped_scenarios()[:30]))
    plan: Any = copy.deepcopy(sc.reference_plan)
    for _ in range(data.draw(st.integers(1, 4))):
        day = data.draw(st.sampled_from(plan["days"]))
        stop = data.draw(st.sampled_from(day["stops"]))
        key = data.draw(
            st.sampled_from(
                ["id", "kind", "start", "end", "transport_to_next", "meal", "fare_class", "day"]
            )
        )
        if key == "day":
            day["day"] = data.draw(_VALUES)
        elif data.draw(st.booleans()):
            stop[key] = data.draw(_VALUES)
        else:
            stop.pop(key, None)
    report = check_plan(world, sc, plan)
    assert report["total"] == sc.n_constraints
    assert all(isinstance(r["reason"], str) and r["reason"] for r in report["results"])
