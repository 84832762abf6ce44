"""Metric arithmetic of spec §7-8 on hand-made grader results."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from benchmarks.formulacode.grading import aggregate, evaluate
from environments.formulacode import metrics as m


def _result(base: dict[str, float], expert: dict[str, float], agent: dict[str, float],
            agent_tests: int = 0, snapshot: str = "passed") -> dict:
    def tree(times: dict[str, float], bad: int = 0, snap: str = "passed") -> dict:
        return {"apply": {"ok": True}, "samples": {k: [v, v, v] for k, v in times.items()},
                "round_medians": {k: [v, v * 1.02] for k, v in times.items()},
                "tests": {"failed": bad, "error": 0}, "snapshot": {"status": snap}}

    return {"workloads": list(base), "trees": {"baseline": tree(base), "expert": tree(expert),
                                               "agent": tree(agent, agent_tests, snapshot)}}


BASE = {"mod.A.time_f(1)": 4.0, "mod.A.time_f(2)": 8.0, "mod.B.time_g": 2.0}
EXPERT = {"mod.A.time_f(1)": 1.0, "mod.A.time_f(2)": 2.0, "mod.B.time_g": 1.0}


def test_decompose_follows_the_spec_rules() -> None:
    assert m.decompose("bench.Cls.time_x(1, 'a')") == ("bench", "Cls", "time_x")
    assert m.decompose("pkg.bench.time_y") == ("pkg.bench", None, "time_y")
    assert m.decompose("time_z") == (None, None, "time_z")


def test_oracle_equivalent_agent_has_zero_advantage_at_every_level() -> None:
    ev = evaluate(_result(BASE, EXPERT, EXPERT), "agent")
    assert ev["success"] and not ev["gated"]
    assert all(ev[f"advantage_{lv}"] == pytest.approx(0.0) for lv in m.LEVELS)
    assert ev["speedup"] == pytest.approx((4 * 4 * 2) ** (1 / 3))


def test_levels_differ_when_groups_are_unbalanced() -> None:
    agent = {"mod.A.time_f(1)": 1.0, "mod.A.time_f(2)": 2.0, "mod.B.time_g": 2.0}
    ev = evaluate(_result(BASE, EXPERT, agent), "agent")
    # class level: A ties (0), B loses 1 - 2 = -1 -> mean -0.5; overall: G(4,4,1) - G(4,4,2)
    assert ev["advantage_class"] == pytest.approx(-0.5)
    assert ev["advantage_overall"] == pytest.approx(16 ** (1 / 3) - 32 ** (1 / 3))


def test_failing_tests_revert_the_agent_to_baseline() -> None:
    fast = {k: v / 10 for k, v in BASE.items()}
    ev = evaluate(_result(BASE, EXPERT, fast, agent_tests=1), "agent")
    assert ev["gated"] and ev["failure"] == "tests failed"
    assert ev["speedup"] == 1.0 and ev["reward"] == -1.0
    assert ev["advantage_overall"] == pytest.approx(1 - 32 ** (1 / 3))


def test_snapshot_mismatch_gates() -> None:
    ev = evaluate(_result(BASE, EXPERT, EXPERT, snapshot="failed"), "agent")
    assert ev["failure"] == "snapshot mismatch" and not ev["success"]


def test_missing_baseline_is_infra_not_agent_failure() -> None:
    res = _result(BASE, EXPERT, EXPERT)
    res["trees"]["baseline"]["samples"] = {}
    ev = evaluate(res, "agent")
    assert ev["infra_failure"] and ev["failure"].startswith("infra:")
    assert evaluate({"infra_error": "no benchmarks discovered"}, "agent")["infra_failure"]


def test_reward_pieces() -> None:
    assert m.reward(2.0, gated=True) == -1.0
    assert m.reward(0.5, gated=False) == pytest.approx(0.625)
    assert m.reward(1.08, gated=False) == pytest.approx(3.5)
    assert m.reward(100.0, gated=False) == pytest.approx(6.0)
    assert m.reward(1.5, gated=False, oracle_run=True) == 1.5


def test_geomean_ignores_nonpositive_and_aggregate_keeps_infra_apart() -> None:
    assert m.geomean([2.0, 8.0, 0.0, math.inf]) == pytest.approx(4.0)
    rows: list[dict[str, Any]] = [{"infra_failure": False, "success": True, "speedup": 2.0,
             **{f"advantage_{lv}": 0.5 for lv in m.LEVELS}},
            {"infra_failure": False, "success": False, "speedup": 1.0,
             **{f"advantage_{lv}": -0.5 for lv in m.LEVELS}},
            {"infra_failure": True}]
    agg = aggregate(rows)
    assert agg["infra_failure_rate"] == pytest.approx(1 / 3)
    assert agg["advantage_overall"] == 0.0 and agg["success_rate"] == 0.5
    assert agg["speedup_geomean"] == pytest.approx(2 ** 0.5)


def test_triage_and_diagnosis() -> None:
    assert m.triage(["a.py::f", "a.py::g"], ["a.py::f"]) == 0.5
    assert m.diagnosis(['{"cmd": "python3 -m cProfile -s cumtime x.py"}'])
    assert not m.diagnosis(['{"cmd": "ls"}'])


INFRA_ROWS = Path(__file__).parent / "data" / "infra_rows.json"


def test_aggregate_excludes_and_counts_infra_failures() -> None:
    """The shared fixture (the Inspect scorer's test reads the same file)."""
    rows = json.loads(INFRA_ROWS.read_text())["rows"]
    agg = aggregate(rows)
    assert agg["tasks"] == 6 and agg["tasks_rated"] == 4 and agg["infra_failures"] == 2
    assert agg["infra_failure_rate"] == pytest.approx(2 / 6)
    assert agg["advantage_overall"] == pytest.approx((0.5 - 0.3 + 0.1 - 0.7) / 4)
    assert agg["advantage_raw_overall"] == pytest.approx((0.6 - 0.2 + 0.1 - 0.9) / 4)
    assert agg["speedup_geomean"] == pytest.approx((2.0 * 1.0 * 1.2 * 0.9) ** 0.25)
    assert agg["success_rate"] == pytest.approx(0.75)
    assert agg["advantage_ratio_geomean"] == pytest.approx((1.2 * 0.8 * 1.05 * 0.7) ** 0.25)
    lo, hi = agg["advantage_overall_ci_low"], agg["advantage_overall_ci_high"]
    assert lo < agg["advantage_overall"] < hi
