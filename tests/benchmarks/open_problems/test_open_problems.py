"""The open-problems benchmark end to end: programs run in bwrap, solutions verified exactly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task, task_with
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog

from benchmarks.open_problems import policies
from benchmarks.open_problems.open_problems import (
    circle_packing,
    first_autocorrelation,
    open_problem,
)
from benchmarks.open_problems.scorer import final_program
from environments.open_problems import PROBLEMS
from harness.sandbox.bwrap import bwrap_available
from methods.thetaevolve.evolve import PENALTIES, Outcome
from methods.thetaevolve.thetaevolve import STORE_CANDIDATES, STORE_SUMMARY, thetaevolve

REPO = Path(__file__).resolve().parents[3]
needs_bwrap = pytest.mark.skipif(not bwrap_available(), reason="bubblewrap cannot start here")
GREEDY: dict[str, Any] = {"parents_per_step": 1, "responses_per_parent": 2, "num_islands": 1,
          "elite_size": 1, "exploitation": 1.0}


def test_tasks_carry_the_initial_program_and_the_sandbox() -> None:
    for factory, name in ((circle_packing, "circle_packing"),
                          (first_autocorrelation, "first_autocorrelation")):
        task = factory()
        sample = task.dataset[0]
        assert sample.id == name
        assert sample.metadata is not None
        assert sample.metadata["initial_program"] == PROBLEMS[name].initial_program()
        assert task.sandbox is not None and task.sandbox.type == "bwrap"


def test_final_program_takes_the_last_code_block() -> None:
    text = "first\n```python\na = 1\n```\nthen\n```python\nb = 2\n```"
    assert final_program(text) == "b = 2\n"
    assert final_program("print(1)") == "print(1)"


def _run(task: Task, model: str, tmp_path: Path, **solver: Any) -> EvalLog:
    if solver:
        task = task_with(task, solver=thetaevolve(checkpoint_dir=str(tmp_path / "ckpt"),
                                                  **solver))
    return inspect_eval(task, model=model, display="none", log_dir=str(tmp_path / "logs"))[0]


@needs_bwrap
@pytest.mark.slow
def test_improver_on_circle_packing_rises_and_the_score_is_verified(tmp_path: Path) -> None:
    log = _run(circle_packing(), "scripted/evolve-improver", tmp_path, steps=3, **GREEDY)
    assert log.status == "success" and log.samples
    sample = log.samples[0]
    rows = sample.store[STORE_CANDIDATES]
    best = [max(r["score"] for r in rows if r["step"] <= s) for s in (1, 2, 3)]
    summary = sample.store[STORE_SUMMARY]
    assert summary["initial_score"] < best[0] < best[1] < best[2]
    assert sample.scores is not None
    score = sample.scores["verified_objective"]
    assert score.metadata is not None and score.metadata["valid"] is True
    assert isinstance(score.value, dict)
    objective = score.value["objective"]
    assert objective == pytest.approx(best[2], abs=1e-12)  # re-run in the sandbox, same result
    assert objective == pytest.approx(summary["best_objective"], abs=1e-12)
    start = score.metadata["initial_objective"]
    assert start == pytest.approx(summary["initial_score"], abs=1e-12)
    assert 0 < score.value["gap_closed"] < 1
    assert score.value["gap_closed"] == pytest.approx(
        (objective - start) / (PROBLEMS["circle_packing"].best_known - start))
    assert score.value["gap_to_best"] == pytest.approx(
        PROBLEMS["circle_packing"].best_known - objective)
    search = score.metadata["search"]  # the solver's search measures travel with the score
    assert search["diff_share"] == 1.0 and search["responses"] == 6
    assert search["best_score_per_step"] == [summary["initial_score"], *best]
    assert search["tokens_used"] == summary["tokens_used"] > 0


def test_search_metadata_picks_the_small_fields_and_ignores_no_summary() -> None:
    from benchmarks.open_problems.scorer import search_metadata

    assert search_metadata(None) is None
    picked = search_metadata({"diff_share": 0.5, "run_key": "x", "candidates": 4,
                              "rl": {"checkpoint": "/ck", "updates": [
                                  {"step": 1, "reward_mean": -0.4, "settings": {}}]}})
    assert picked == {"diff_share": 0.5, "candidates": 4, "rl_checkpoint": "/ck",
                      "rl_updates": [{"step": 1, "reward_mean": -0.4, "reward_std": None,
                                      "loss": None, "groups": None, "flat_groups": None,
                                      "cpu_s": None}]}


@needs_bwrap
@pytest.mark.slow
def test_penalties_with_a_real_sandbox(tmp_path: Path) -> None:
    log = _run(first_autocorrelation(), "scripted/evolve-mixed", tmp_path, steps=1,
               parents_per_step=1, responses_per_parent=4)
    rows = log.samples[0].store[STORE_CANDIDATES]  # type: ignore[index]
    outcomes = {policies.MODES[r["seed"] % 4]: r for r in rows}
    assert set(outcomes) == set(policies.MODES)
    assert outcomes["improve"]["outcome"] == Outcome.VALID
    assert outcomes["improve"]["objective"] < 2.0  # the bound went down from the constant's 2
    assert outcomes["error"]["outcome"] == Outcome.EXEC_ERROR
    assert "scripted failure" in outcomes["error"]["reason"]  # the sandbox's traceback
    for mode, outcome in (("no_diff", Outcome.NO_DIFF), ("identical", Outcome.IDENTICAL)):
        assert outcomes[mode]["outcome"] == outcome
        assert outcomes[mode]["reward"] == PENALTIES[outcome]


BAD_PACKING = (
    "import json\njson.dump([[0.5, 0.5, 0.3]] * 26, open('solution.json', 'w'))\n"
)


@needs_bwrap
@pytest.mark.parametrize(
    ("program", "fragment"),
    [
        (BAD_PACKING, "overlap"),
        ("while True:\n    pass\n", "timed out after 3 s"),
        ("import socket\nsocket.create_connection(('127.0.0.1', 9), timeout=2)\n",
         "execution failed"),
    ],
)
@pytest.mark.slow
def test_scorer_rejects_bad_programs(program: str, fragment: str, tmp_path: Path) -> None:
    from inspect_ai.solver import Generate, TaskState, solver

    @solver
    def answer() -> Any:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            state.output.completion = f"```python\n{program}```"
            return state

        return solve

    task = task_with(open_problem("circle_packing", timeout=3), solver=answer())
    score = _run(task, "scripted/echo", tmp_path).samples[0].scores["verified_objective"]  # type: ignore[index]
    assert score.metadata is not None
    assert score.metadata["valid"] is False and fragment in str(score.explanation)
    assert isinstance(score.value, dict)
    assert score.value["objective"] == PROBLEMS["circle_packing"].trivial
    assert score.value["gap_closed"] < 0


@needs_bwrap
@pytest.mark.slow
def test_killed_eval_process_resumes_with_no_candidate_lost(tmp_path: Path) -> None:
    ckpt = tmp_path / "ckpt"
    env = {**os.environ, "THETAEVOLVE_CHECKPOINT_DIR": str(ckpt)}
    args = ["-T", "steps=4", "-T", "parents_per_step=2", "-T", "responses_per_parent=2"]
    cmd = [str(Path(sys.executable).parent / "inspect"), "eval", "harness/circle_packing",
           "--model", "scripted/evolve-improver", "--display", "none",
           "--log-dir", str(tmp_path / "killed"), *args]
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    before: dict[str, dict[str, Any]] = {}
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and len(before) < 5 and proc.poll() is None:
            time.sleep(0.2)
            for journal in ckpt.glob("*/journal.jsonl"):
                lines = journal.read_text().splitlines()
                before = {r["id"]: r for r in map(json.loads, lines[:-1])
                          if r["kind"] == "candidate"}
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)  # the whole session we started, sandboxes too
        proc.wait()
    assert 5 <= len(before) < 16, "the run should be killed after step 1, before the end"

    os.environ["THETAEVOLVE_CHECKPOINT_DIR"] = str(ckpt)
    try:
        log = _run(circle_packing(steps=4, parents_per_step=2, responses_per_parent=2),
                   "scripted/evolve-improver", tmp_path)
    finally:
        del os.environ["THETAEVOLVE_CHECKPOINT_DIR"]
    after = {r["id"]: r for r in log.samples[0].store[STORE_CANDIDATES]}  # type: ignore[index]
    assert len(after) == 16
    for cid, record in before.items():
        assert after[cid]["score"] == record["score"] and after[cid]["seed"] == record["seed"]
