"""Running studies: resume after a real kill, dry runs, factor levels in the frame, stacks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import polars as pl
import pytest

from harness.factorial.run import cell_status, plan, run_study
from harness.factorial.study import StudyError, load_study
from harness.results import read_results, with_metadata_columns

pytestmark = pytest.mark.serial  # Ray, lm-eval, kill-and-resume timing: CI runs it alone

EXAMPLES = Path(__file__).resolve().parents[3] / "harness" / "factorial" / "examples"


def _study(tmp_path: Path, n: int, extra_factor: str = "") -> Path:
    path = tmp_path / "study.yaml"
    path.write_text(textwrap.dedent(f"""\
        name: killable
        response:
          tasks:
            - name: harness/arithmetic
              args: {{n: {n}, seed: 4, agent: react}}
          scores: [exact_integer]
        factors:
          - name: model
            binds_to: model
            levels:
              - {{label: oracle, value: scripted/arith-oracle}}
              - {{label: ltr, value: scripted/arith-left-to-right}}
          - name: intervention
            binds_to: intervention
            levels: [none, distractor]
        """) + extra_factor)
    return path


def _success_frame(log_dir: Path) -> pl.DataFrame:
    """Successful logs' rows of the study's own score (not the tool-call diagnostic)."""
    frame = read_results(log_dir).filter(pl.col("status") == "success")
    frame = frame.filter(~pl.col("score_key").str.starts_with("tool_call_validity"))
    return with_metadata_columns(frame, ["cell_id", "factors"])


@pytest.mark.slow
def test_killed_study_resumes_every_cell_once(tmp_path: Path) -> None:
    n = 60
    study_path = _study(tmp_path, n)
    log_dir = tmp_path / "logs"
    script = (
        "from harness.factorial.run import run_study\n"
        f"run_study({str(study_path)!r}, log_dir={str(log_dir)!r}, max_tasks=1,"
        " max_samples=1)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while not list(log_dir.glob("*.eval")):  # the first cell's log appears
            assert proc.poll() is None, "the study ended before it could be killed"
            time.sleep(0.02)
        time.sleep(0.3)  # let it finish a few samples of that cell
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # our own child's process group only
        proc.wait()

    cells = load_study(study_path).cells()
    before = cell_status(log_dir)
    complete_before = {cid for cid, status in before.items() if status == "success"}
    assert len(complete_before) < len(cells), "the kill came too late to test a resume"
    assert any(status == "started" for status in before.values())  # really interrupted

    summary = run_study(study_path, log_dir=log_dir, max_tasks=2)
    assert summary.success
    assert set(summary.skipped) == complete_before
    assert set(summary.ran) == {c.id for c in cells} - complete_before
    assert len(summary.new_logs) == len(summary.ran)  # one eval per unfinished cell

    frame = _success_frame(log_dir)
    per_cell = frame.group_by("cell_id").agg(
        pl.col("log_file").n_unique().alias("logs"),
        pl.len().alias("rows"),
        pl.struct("sample_id", "epoch").n_unique().alias("samples"),
    )
    assert per_cell.height == len(cells)
    assert per_cell["logs"].to_list() == [1] * len(cells)  # one successful eval per cell
    assert per_cell["rows"].to_list() == [n] * len(cells)  # no sample lost or duplicated
    assert per_cell["samples"].to_list() == [n] * len(cells)

    again = run_study(study_path, log_dir=log_dir)
    assert again.ran == [] and again.new_logs == []


def test_dry_run_plans_without_running(tmp_path: Path) -> None:
    study_path = _study(tmp_path, 5)
    log_dir = tmp_path / "logs"
    summary = run_study(study_path, log_dir=log_dir, dry_run=True)
    assert summary.dry_run and summary.ran == [] and not log_dir.exists()
    assert summary.plan is not None
    assert len(summary.plan.cells) == 4
    assert summary.plan.samples == 4 * 5
    assert summary.plan.est_tokens > 0 and summary.plan.est_seconds > 0
    assert summary.plan.rates_from == "built-in table"
    table = summary.plan.table()
    assert "model=oracle intervention=distractor" in table and "4 cells, 20 samples" in table


def test_plan_counts_limit_and_epochs(tmp_path: Path) -> None:
    study_path = _study(tmp_path, 9, "limit: 3\nreplicates: {epochs: 2}\n")
    result = plan(load_study(study_path), tmp_path / "none")
    assert [c.samples for c in result.cells] == [6] * 4


def test_malformed_study_fails_before_running(tmp_path: Path) -> None:
    study_path = _study(tmp_path, 5, "limit: many\n")
    with pytest.raises(StudyError, match=r"study.yaml:16: limit: Input should be a valid"):
        run_study(study_path, log_dir=tmp_path / "logs")
    assert not (tmp_path / "logs").exists()


@pytest.mark.slow
def test_factor_levels_reach_the_frame_and_plan_learns_rates(tmp_path: Path) -> None:
    log_dir = tmp_path / "logs"
    summary = run_study(EXAMPLES / "tiny_study.yaml", log_dir=log_dir)
    assert summary.success and len(summary.ran) == 4
    frame = _success_frame(log_dir)
    levels = with_metadata_columns(
        frame.select("factors").unique().rename({"factors": "eval_metadata"}),
        ["model", "intervention"],
    )
    assert sorted(levels.select("model", "intervention").rows()) == [
        ("left_to_right", "distractor"), ("left_to_right", "none"),
        ("oracle", "distractor"), ("oracle", "none"),
    ]
    scores = (with_metadata_columns(frame, ["model"], source="factors", prefix="f_")
              .group_by("f_model").agg(pl.col("score_value").mean()))
    by_model = dict(scores.rows())
    assert by_model["oracle"] == 1.0 and by_model["left_to_right"] < 1.0
    tags = frame.filter(pl.col("task_args").str.contains('"intervention":"distractor"'))["tags"]
    assert all("intervention=distractor" in t for t in tags.to_list())
    # a second plan estimates from these logs instead of the built-in table
    assert plan(load_study(EXAMPLES / "tiny_study.yaml"), log_dir).rates_from == "earlier logs"


@pytest.mark.slow
def test_lmeval_stack_matches_inspect_per_item(tmp_path: Path) -> None:
    pytest.importorskip("lm_eval", reason="lm-evaluation-harness is not installed")
    study_path = _study(tmp_path, 6, textwrap.indent(textwrap.dedent("""\
        - name: stack
          binds_to: stack
          levels: [inspect, lm-eval]
        """), "  "))
    text = study_path.read_text().replace("agent: react", "agent: generate")
    study_path.write_text(text)
    log_dir = tmp_path / "logs"
    summary = run_study(study_path, log_dir=log_dir)
    assert summary.success and len(summary.ran) == 8
    frame = with_metadata_columns(_success_frame(log_dir), ["model", "intervention", "stack"],
                                  source="factors", prefix="f_")
    assert frame.height == 8 * 6
    wide = frame.pivot("f_stack", index=["f_model", "f_intervention", "sample_id"],
                       values="score_value")
    # deterministic agents: the two stacks score every item the same
    assert wide["inspect"].to_list() == wide["lm-eval"].to_list()
    assert set(frame.filter(pl.col("f_model") == "ltr")["score_value"].to_list()) == {0.0, 1.0}


@pytest.mark.slow
def test_ray_executor_runs_each_cell(tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="ray is not installed (pip install 'ray>=2.30')")
    log_dir = tmp_path / "logs"
    summary = run_study(EXAMPLES / "tiny_study.yaml", log_dir=log_dir, executor="ray")
    assert summary.success and len(summary.new_logs) == 4
    frame = _success_frame(log_dir)
    assert frame.group_by("cell_id").len()["len"].to_list() == [4] * 4
    again = run_study(EXAMPLES / "tiny_study.yaml", log_dir=log_dir, executor="ray")
    assert again.ran == [] and again.new_logs == []
