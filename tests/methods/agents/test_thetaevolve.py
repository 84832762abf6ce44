"""ThetaEvolve end to end with scripted models and a host-side evaluator tool.

The evaluator here scores a program by its ``ITERATIONS`` constant (``N / (N + 1000)``,
strictly increasing) and fails programs that raise, so the agent's logic is tested
without a sandbox; ``tests/benchmarks/open_problems`` runs the real sandboxed benchmark.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog
from inspect_ai.scorer import match
from inspect_ai.solver import use_tools
from inspect_ai.tool import Tool, tool

import benchmarks.open_problems.policies as policies  # registers scripted/evolve-*
from methods.agents.evolve import PENALTIES, Outcome
from methods.agents.thetaevolve import (
    STORE_CANDIDATES,
    STORE_SUMMARY,
    Rollout,
    read_rollouts,
    thetaevolve,
)

PROGRAM = "# EVOLVE-BLOCK-START\nITERATIONS = 0\n# EVOLVE-BLOCK-END\nprint('hi')\n"
EXPECTED = {"improve": Outcome.VALID, "no_diff": Outcome.NO_DIFF,
            "identical": Outcome.IDENTICAL, "error": Outcome.EXEC_ERROR}


def fitness(code: str) -> float:
    n = int(re.search(r"^ITERATIONS = (\d+)", code, re.MULTILINE).group(1))  # type: ignore[union-attr]
    return n / (n + 1000)


@tool
def fake_evaluator() -> Tool:
    async def execute(code: str) -> str:
        """Score a program by its ITERATIONS constant; programs that raise fail.

        Args:
            code: Program source.
        """
        if "raise" in code:
            return json.dumps({"ran": False, "valid": False, "combined_score": 0.0,
                               "objective": None, "reason": "execution failed: RuntimeError"})
        score = fitness(code)
        return json.dumps({"ran": True, "valid": True, "combined_score": score,
                           "objective": score, "reason": "ok"})

    return execute


def run(tmp_path: Path, model: str, ckpt: str = "ckpt", model_args: dict[str, Any] | None = None,
        **settings: Any) -> EvalLog:
    task = Task(
        dataset=[Sample(id="toy", input="Make ITERATIONS large.",
                        metadata={"initial_program": PROGRAM})],
        setup=use_tools(fake_evaluator()),
        solver=thetaevolve(evaluator_tool="fake_evaluator",
                           checkpoint_dir=str(tmp_path / ckpt), **settings),
        scorer=match(),
    )
    log = inspect_eval(task, model=model, model_args=model_args or {}, display="none",
                       log_dir=str(tmp_path / "logs"), log_samples=True)[0]
    return log


def candidates(log: EvalLog) -> list[dict[str, Any]]:
    assert log.samples
    return list(log.samples[0].store[STORE_CANDIDATES])


GREEDY: dict[str, Any] = {"steps": 4, "parents_per_step": 1, "responses_per_parent": 2,
                          "num_islands": 1, "elite_size": 1, "exploitation": 1.0}


def test_improver_raises_the_best_score_every_step(tmp_path: Path) -> None:
    log = run(tmp_path, "scripted/evolve-improver", **GREEDY)
    assert log.status == "success"
    rows = candidates(log)
    assert len(rows) == 4 * 2
    best_by_step = [max(r["score"] for r in rows if r["step"] <= s) for s in range(1, 5)]
    assert all(b > a for a, b in zip(best_by_step, best_by_step[1:], strict=False))
    scores = {r["id"]: r["score"] for r in rows}
    for row in rows:  # every child beats its parent
        parent = scores.get(row["parent"], fitness(PROGRAM))
        assert row["outcome"] == Outcome.VALID and row["score"] > parent
    summary = log.samples[0].store[STORE_SUMMARY]  # type: ignore[index]
    assert summary["best_score"] == best_by_step[-1] > summary["initial_score"]
    best_code = log.samples[0].output.completion  # type: ignore[index]
    assert fitness(best_code) == summary["best_score"]
    info = [e for e in log.samples[0].events if e.event == "info"]  # type: ignore[index]
    assert [e.data["step"] for e in info] == [1, 2, 3, 4]  # type: ignore[call-overload,index,union-attr]


def test_lazy_penalties_fire_exactly_when_they_should(tmp_path: Path) -> None:
    log = run(tmp_path, "scripted/evolve-mixed", steps=3, parents_per_step=2,
              responses_per_parent=2)
    rows = candidates(log)
    assert len(rows) == 12
    seen = set()
    for row in rows:
        expected = EXPECTED[policies.MODES[row["seed"] % len(policies.MODES)]]
        seen.add(expected)
        assert row["outcome"] == expected, row
        if expected in PENALTIES:
            assert row["reward"] == PENALTIES[expected] and row["score"] is None
        else:
            assert row["reward"] == row["score"] > 0
    assert seen == set(EXPECTED.values())


def test_rollouts_reach_the_sink_and_the_journal(tmp_path: Path) -> None:
    received: list[Rollout] = []
    log = run(tmp_path, "scripted/evolve-mixed", steps=2, parents_per_step=1,
              responses_per_parent=4, rollout_sink=received.append)
    rows = candidates(log)
    assert [r.candidate_id for r in received] == [r["id"] for r in rows]
    assert [r.reward for r in received] == [r["reward"] for r in rows]
    assert all("ITERATIONS" in r.prompt[-1]["content"] for r in received)
    run_dir = log.samples[0].store[STORE_SUMMARY]["checkpoint"]  # type: ignore[index]
    assert read_rollouts(run_dir) == received


def test_a_run_that_dies_mid_way_resumes_with_no_candidate_lost(tmp_path: Path) -> None:
    settings: dict[str, Any] = {"steps": 4, "parents_per_step": 2, "responses_per_parent": 2}
    crashed = run(tmp_path, "scripted/evolve-improver",
                  model_args={"fail_after": 6, "run_id": str(tmp_path)}, **settings)
    assert crashed.status == "error"
    journal = next((tmp_path / "ckpt").glob("*/journal.jsonl"))
    before = {r["id"]: r for r in map(json.loads, journal.read_text().splitlines())
              if r["kind"] == "candidate"}
    assert 4 <= len(before) < 16  # step 1 finished, step 2 did not

    resumed = run(tmp_path, "scripted/evolve-improver", **settings)
    assert resumed.status == "success"
    after = {r["id"]: r for r in candidates(resumed)}
    assert len(after) == 16 and len(candidates(resumed)) == 16
    generated = [e for e in resumed.samples[0].events if e.event == "model"]  # type: ignore[index]
    assert len(generated) == 16 - len(before)  # only the missing responses were asked for
    for cid, record in before.items():  # nothing from the first run lost or re-scored
        assert after[cid]["score"] == record["score"]
        assert after[cid]["parent"] == record["parent"]

    fresh = run(tmp_path, "scripted/evolve-improver", ckpt="other", **settings)
    uninterrupted = {r["id"]: (r["parent"], r["score"]) for r in candidates(fresh)}
    assert uninterrupted == {cid: (r["parent"], r["score"]) for cid, r in after.items()}
