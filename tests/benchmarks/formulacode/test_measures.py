"""Issue 46's measures on the host side: a task's declared measure, exact grading of
cycles, wall tasks skipped on a noisy host, the acceptance with not-graded rows, the
headline's per-task measures (no timing here: synthetic grader results)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from benchmarks.formulacode import validate
from benchmarks.formulacode.grading import evaluate
from environments.formulacode import acceptance, metrics
from environments.formulacode.grader import GradeSettings, task_timer
from environments.formulacode.pack import pack_record
from environments.formulacode.records import load_records


def _tree(values: dict[str, list[float]]) -> dict[str, Any]:
    return {"apply": {"ok": True}, "samples": {w: list(v) for w, v in values.items()},
            "round_medians": {w: list(v) for w, v in values.items()},
            "tests": {"failed": 0, "error": 0}, "snapshot": {"status": "passed"}}


def _cycles_result(base: float, expert: float, oracle: float, rounds: int = 2,
                   timer: str = "cycles") -> dict[str, Any]:
    wls = ["m.A.time_x(1)", "m.A.time_x(2)"]
    return {"timer": timer, "workloads": wls, "controls": ["control"], "trees": {
        "baseline": _tree({w: [base] * rounds for w in wls}),
        "control": _tree({w: [base] * rounds for w in wls}),
        "expert": _tree({w: [expert] * rounds for w in wls}),
        "oracle": _tree({w: [oracle] * rounds for w in wls}),
        "noop": _tree({w: [base] * rounds for w in wls})}}


def test_every_pack_task_declares_its_measure() -> None:
    records = load_records("pack")
    measures = {r.extra["pack_slug"]: task_timer(r.extra) for r in records}
    assert set(measures.values()) == {"cycles", "wall"}
    for r in records:  # parallel and I/O-hiding tasks on the wall clock, the rest cycles
        expected = "wall" if r.extra.get("kind") in acceptance.WALL_KINDS else "cycles"
        assert measures[r.extra["pack_slug"]] == expected, r.extra["pack_slug"]
    assert pack_record("topk", 1)["measure"] == "cycles"


def test_for_task_takes_the_measure_and_fixes_cycles_rounds() -> None:
    settings = GradeSettings(rounds=5, max_rounds=10, timer="task", cycles_rounds=2)
    cyc = settings.for_task({"measure": "cycles", "timer": "process_cpu"})
    assert (cyc.timer, cyc.rounds, cyc.max_rounds) == ("cycles", 2, 2)
    wall = settings.for_task({"measure": "wall", "cpus": 2})
    assert (wall.timer, wall.rounds, wall.max_rounds, wall.cpus) == ("wall", 5, 10, 2)
    assert settings.for_task({"timer": "process_cpu"}).timer == "process_cpu"  # old records
    with pytest.raises(ValueError):
        settings.for_task({"measure": "instructions"})


def test_cycles_grading_is_exact() -> None:
    result = _cycles_result(base=3.0e6, expert=2.0e6, oracle=2.0e6)
    oracle, noop = evaluate(result, "oracle"), evaluate(result, "noop")
    assert oracle["test"] == "exact" and oracle["measure"] == "cycles"
    assert oracle["speedup"] == pytest.approx(1.5) and oracle["speedup_significant"]
    assert oracle["advantage_overall"] == 0.0 and oracle["advantage_ci"] == [0.0, 0.0]
    assert oracle["noise_floor"] == pytest.approx(metrics.CYCLES_FLOOR)
    assert noop["speedup"] == 1.0 and not noop["speedup_significant"]
    assert set(oracle["workload_p"].values()) == {0.0}
    # within the floor (0.5% < 1%): not counted
    small = evaluate(_cycles_result(base=1.0e6, expert=0.995e6, oracle=0.995e6), "oracle")
    assert not small["speedup_significant"] and small["significant_workloads"] == 0


def test_cycles_grading_refuses_work_outside_the_measured_thread() -> None:
    result = _cycles_result(base=3.0e6, expert=1.0e4, oracle=1.0e4, rounds=1)
    pooled = {"ir": 1e4, "outside_ir": 0, "process_cpu": 3.8, "outside_cpu": 3.0}
    result["trees"]["expert"]["cycles"] = {"m.A.time_x(1)": [pooled]}
    ev = evaluate(result, "oracle")
    assert ev["infra_failure"] and "cycles timer refused" in ev["failure"]
    assert ev["speedup"] == 1.0  # no 300x from an uncounted thread pool


def _row(speedup: float, timer: str, **extra: Any) -> dict[str, Any]:
    return {"oracle_speedup": speedup, "oracle_significant": True, "tests_pass": True,
            "oracle_advantage_ci": [0.0, 0.0], "noop_significant": False, "timer": timer,
            "baseline_workload_cv": {"w1": 0.0, "w2": 0.001}, "kind": "algorithmic",
            "infra_failure": None, **extra}


def _criteria(out: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in out["criteria"]}


def test_acceptance_counts_not_graded_wall_tasks_and_excuses_the_probe() -> None:
    rows = {"a": _row(1.4, "cycles"), "b": _row(1.2, "cycles"),
            "p": {"not_graded": "host noise 12.0%", "timer": "wall", "kind": "parallelism"}}
    noisy = [{"max_cv": 0.12, "quiet_cv": 0.05, "quiet": False}] * 2
    out = acceptance.check(rows, host_noise=noisy)
    crit = _criteria(out)
    assert out["passed"], [c for c in out["criteria"] if not c["passed"]]
    assert crit["tasks_measured"]["value"] == 2  # the skipped task is not rated
    assert crit["not_graded"]["value"] == {"p": "host noise 12.0%"}
    assert crit["quiet_machine"]["passed"] and "not required" in crit["quiet_machine"][
        "threshold"]
    assert "no wall task graded" in str(crit["wall_tasks_speed_up"]["value"])
    # a graded clock-timed task makes the probe a requirement again
    rows["w"] = _row(1.3, "wall", kind="parallelism")
    crit = _criteria(acceptance.check(rows, host_noise=noisy))
    assert not crit["quiet_machine"]["passed"] and crit["quiet_machine"]["failing_tasks"] == [
        "w"]


def test_wall_gate_skips_wall_tasks_on_a_noisy_host(monkeypatch: pytest.MonkeyPatch) -> None:
    records = {r.extra["pack_slug"]: r for r in load_records("pack")}
    probes = iter([{"max_cv": 0.231, "quiet_cv": 0.05, "quiet": False},
                   {"max_cv": 0.02, "quiet_cv": 0.05, "quiet": True}])
    monkeypatch.setattr(validate.host_noise, "probe", lambda *a, **k: next(probes))
    settings = GradeSettings(timer="task")
    assert validate.wall_gate(records["topk"], settings) is None  # cycles: no probe taken
    row = validate.wall_gate(records["pmap"], settings)
    assert row is not None and row["not_graded"] == "host noise 23.1%"
    assert validate.wall_gate(records["pmap"], settings) is None  # quiet now: graded
    assert validate.wall_gate(records["kassign"], settings, grade_noisy=True) is None


def test_headline_uses_each_tasks_measure_and_counts_the_rest() -> None:
    rows = {"a": _row(2.0, "cycles"), "b": _row(1.125, "cycles"), "c": _row(1.5, "wall"),
            "d": {"not_graded": "host noise 9.0%", "timer": "wall"},
            "e": {**_row(9.0, "cycles"), "infra_failure": "cycles timer refused"}}
    head = validate.headline(rows)
    assert head["oracle_speedup_geomean"] == pytest.approx(math.exp(
        (math.log(2.0) + math.log(1.125) + math.log(1.5)) / 3))
    assert head["tasks_by_measure"] == {"cycles": 2, "wall": 1}
    assert head["not_graded"] == 1 and "cycles" in head["note"]


def test_summary_row_of_a_one_round_cycles_run() -> None:
    """One round, no control: the workload CV comes from the baseline and the noop copy."""
    result = _cycles_result(base=3.0e6, expert=2.0e6, oracle=2.0e6, rounds=1)
    del result["trees"]["control"]
    result["controls"] = []
    for key in ("round_medians", "samples"):
        result["trees"]["noop"][key] = {w: [3.003e6] for w in result["workloads"]}
    result["trees"]["oracle"]["round_medians"] = {w: [2.0004e6] for w in result["workloads"]}
    result["trees"]["oracle"]["samples"] = {w: [2.0004e6] for w in result["workloads"]}
    row = validate.summarise(result, GradeSettings())
    assert row["measure"] == "cycles" and row["oracle_speedup"] == pytest.approx(1.5 / 1.0002)
    assert row["oracle_significant"] and not row["noop_significant"]
    # the oracle is 0.02% off the expert; the copies differ by 0.1%: the bound covers 0
    lo, hi = row["oracle_advantage_ci"]
    assert lo < row["oracle_advantage"] < 0 < hi
    assert hi - lo == pytest.approx(2 * 1.5 * 2 * 0.001, rel=0.01)
    cv = 0.003e6 / math.sqrt(2) / 3.0015e6 / math.sqrt(2)  # sd / mean / sqrt(2 processes)
    assert row["baseline_workload_cv"]["m.A.time_x(1)"] == pytest.approx(cv, rel=1e-3)
    out = acceptance.check({"t": {**row, "kind": "algorithmic"}})
    failing = [c["name"] for c in out["criteria"] if not c["passed"]]
    assert failing == ["wall_tasks_speed_up"]  # a run with no wall task at all
    # both CVs under their names: the error of the mean (gated) and the spread of one
    crit = _criteria(out)["workload_cv_median"]
    assert crit["value"] == pytest.approx(cv, rel=1e-3)
    assert crit["spread_of_one_measurement_median"] == pytest.approx(cv * math.sqrt(2),
                                                                     rel=1e-3)
