"""validate's acceptance block and exit code, on synthetic summary rows (no timing)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from benchmarks.formulacode import validate
from environments.formulacode import acceptance, host_noise
from environments.formulacode.records import TaskRecord


def _row(speedup: float = 1.4, timer: str = "process_cpu", kind: str = "algorithmic",
         cvs: tuple[float, ...] = (0.005, 0.01, 0.012, 0.015, 0.018), **kw: Any
         ) -> dict[str, Any]:
    row: dict[str, Any] = {
        "oracle_speedup": speedup, "oracle_significant": True,
        "oracle_advantage_ci": [-0.01, 0.02], "noop_significant": False,
        "tests_pass": True, "infra_failure": None, "timer": timer, "kind": kind,
        "baseline_workload_cv": {f"b.W.time_x({i})": c for i, c in enumerate(cvs)},
    }
    row.update(kw)
    return row


def _good() -> dict[str, dict[str, Any]]:
    return {"t_algo": _row(), "t_par": _row(1.8, "wall", "parallelism"),
            "t_io": _row(1.2, "wall", "io")}


def _by_name(block: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in block["criteria"]}


def test_a_pack_that_meets_every_criterion_passes() -> None:
    block = acceptance.check(_good())
    assert block["passed"], block
    crit = _by_name(block)
    assert set(crit) == {"tasks_measured", "no_infra_failure", "oracle_passes_gates",
                         "oracle_speedup", "oracle_advantage_ci_covers_zero",
                         "noop_not_significant", "workload_cv_median", "workload_cv_share",
                         "wall_tasks_speed_up", "not_graded"}
    assert crit["workload_cv_median"]["value"] == pytest.approx(0.012)
    assert crit["workload_cv_share"]["value"] == 1.0
    assert crit["wall_tasks_speed_up"]["value"] == {"t_par": 1.8, "t_io": 1.2}
    assert all(c["failing_tasks"] == [] for c in block["criteria"])


@pytest.mark.parametrize("task,change,criterion", [
    ("t_algo", {"oracle_speedup": 1.04}, "oracle_speedup"),
    ("t_algo", {"oracle_significant": False}, "oracle_speedup"),
    ("t_algo", {"oracle_advantage_ci": [0.01, 0.05]}, "oracle_advantage_ci_covers_zero"),
    ("t_algo", {"oracle_advantage_ci": [math.nan, math.nan]}, "oracle_advantage_ci_covers_zero"),
    ("t_io", {"noop_significant": True}, "noop_not_significant"),
    ("t_algo", {"tests_pass": False}, "oracle_passes_gates"),
    ("t_algo", {"infra_failure": "infra: baseline tree could not be built"}, "no_infra_failure"),
    ("t_par", {"oracle_speedup": 0.9}, "wall_tasks_speed_up"),
    ("t_par", {"timer": "process_cpu"}, "wall_tasks_speed_up"),
])
def test_each_criterion_fails_alone_and_names_the_task(task: str, change: dict[str, Any],
                                                       criterion: str) -> None:
    rows = _good()
    rows[task].update(change)
    block = acceptance.check(rows)
    assert not block["passed"]
    failed = [c for c in block["criteria"] if not c["passed"]]
    assert criterion in {c["name"] for c in failed}
    assert task in _by_name(block)[criterion]["failing_tasks"]


def test_cv_criteria_pool_every_workload_of_the_pack() -> None:
    rows = _good()
    # one task with all-noisy workloads: pooled median 1.5% still passes, the share does not
    rows["t_io"]["baseline_workload_cv"] = {f"w{i}": 0.05 for i in range(4)}
    crit = _by_name(acceptance.check(rows))
    assert crit["workload_cv_median"]["passed"]
    assert crit["workload_cv_share"]["value"] == pytest.approx(10 / 14)
    assert not crit["workload_cv_share"]["passed"]
    assert crit["workload_cv_share"]["failing_tasks"] == ["t_io"]
    rows["t_algo"]["baseline_workload_cv"] = {f"w{i}": 0.03 for i in range(5)}
    assert not _by_name(acceptance.check(rows))["workload_cv_median"]["passed"]


def test_an_empty_run_fails() -> None:
    block = acceptance.check({})
    assert not block["passed"]
    assert not _by_name(block)["tasks_measured"]["passed"]


def _record(slug: str) -> TaskRecord:
    return TaskRecord(task_id=f"p_{slug}_1", repo_name=f"p/{slug}", container_name="c",
                      image_name="i", patch="", final_md="", pr_base_sha="a",
                      pr_merge_commit_sha="b", extra={"pack_slug": slug})


def _probe(max_cv: float) -> dict[str, Any]:
    return {"cpus": {"0": {"median_ms": 9.0, "cv": max_cv, "p90_over_median": 1.0}},
            "max_cv": max_cv, "quiet": max_cv <= host_noise.QUIET_CV,
            "quiet_cv": host_noise.QUIET_CV, "reps": 60, "iterations": 1}


@pytest.mark.parametrize("rows,probe_cv,code", [
    (_good(), 0.01, 0),
    ({**_good(), "t_algo": _row(noop_significant=True)}, 0.01, 1),
    ({**_good(), "t_io": _row(1.0, "wall", "io", oracle_significant=False)}, 0.01, 1),
    (_good(), 0.14, 1),  # every task row passes, but the machine was not quiet
])
def test_validate_exit_code_follows_the_acceptance(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str],
                                                   rows: dict[str, dict[str, Any]],
                                                   probe_cv: float, code: int) -> None:
    """``main`` with the grading replaced by the synthetic rows and the machine probe by
    a fixed one: its exit code is the acceptance verdict, and the JSON carries the block
    and both probes."""
    records = [_record(t) for t in rows]
    monkeypatch.setattr(validate, "load_records", lambda _src: records)
    monkeypatch.setattr(validate, "validate_task_local",
                        lambda record, settings, raw_dir=None: rows[record.extra["pack_slug"]])
    monkeypatch.setattr(validate.host_noise, "probe", lambda: _probe(probe_cv))
    assert validate.main(["--local", "--json"]) == code
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["acceptance"]["passed"] is (code == 0)
    assert sorted(out["tasks"]) == sorted(r.task_id for r in records)
    quiet = _by_name(out["acceptance"])["quiet_machine"]
    assert quiet["passed"] is (probe_cv <= host_noise.QUIET_CV)
    assert quiet["value"] == probe_cv
    assert out["settings"]["host_noise"]["start"]["max_cv"] == probe_cv
    assert ("not quiet" in captured.err) is (probe_cv > host_noise.QUIET_CV)


def test_without_a_probe_there_is_no_quiet_machine_criterion() -> None:
    """A regrade times nothing, so it cannot say how quiet the machine was."""
    assert "quiet_machine" not in _by_name(acceptance.check(_good()))
    block = acceptance.check(_good(), host_noise=[_probe(0.01), _probe(0.09)])
    assert not block["passed"] and _by_name(block)["quiet_machine"]["value"] == 0.09


def test_the_old_command_hands_over_to_the_benchmark_layer() -> None:
    """``python -m environments.formulacode.validate`` runs the moved CLI: same arguments,
    same exit code (an unknown task is a clear error with exit status 1)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "environments.formulacode.validate",
                           "--tasks", "no-such-task", "--local"], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 1
    assert "unknown task(s) 'no-such-task'" in done.stderr


def test_regrade_recomputes_the_rows_from_saved_raw_results(
        tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """``--raw-dir`` keeps each task's raw timings; ``--regrade`` gives the same summary rows
    and acceptance block from them without timing anything."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from test_significance import _result

    settings = validate.GradeSettings()
    raw = tmp_path / "raw"
    rows = {}
    for slug, speed in (("fast", 1.5), ("same", 1.0)):  # expert and oracle at ``speed``
        result = {**_result({"oracle": speed, "noop": 1.0}, expert=speed), "rounds": 8}
        rows[f"p_{slug}_1"] = validate.graded(_record(slug), result, settings, raw)
    assert sorted(p.name for p in raw.iterdir()) == ["fast.json", "same.json"]
    assert validate.main(["--regrade", str(raw), "--json"]) == 1  # "same" has no speedup
    out = json.loads(capsys.readouterr().out)
    assert json.loads(json.dumps(rows, default=str)) == out["tasks"]
    failing = {c["name"]: c["failing_tasks"] for c in out["acceptance"]["criteria"]}
    assert failing["oracle_speedup"] == ["p_same_1"]
    with pytest.raises(SystemExit, match="no raw results"):
        validate.regrade(tmp_path / "empty", settings)


def test_the_multiplicity_block_says_what_chance_alone_does() -> None:
    """Two 95% tests per task over 25 tasks: an exact grader passes them all ~7.7% of the
    time and misses ~2.5 by chance; the block is informational (it changes no verdict)."""
    from environments.formulacode.acceptance import multiplicity

    block = multiplicity(25)
    assert block["per_task_tests"] == 50
    assert block["chance_all_pass_if_grader_exact"] == pytest.approx(0.95**50)
    assert 0.07 < block["chance_all_pass_if_grader_exact"] < 0.08
    assert block["expected_chance_misses"] == pytest.approx(2.5)
    assert multiplicity(0)["per_task_tests"] == 0
