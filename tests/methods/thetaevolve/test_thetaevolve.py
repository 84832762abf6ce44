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
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalLog
from inspect_ai.scorer import match
from inspect_ai.solver import use_tools
from inspect_ai.tool import Tool, tool

import benchmarks.open_problems.policies as policies  # registers scripted/evolve-*
from methods.thetaevolve.evolve import PENALTIES, Outcome
from methods.thetaevolve.thetaevolve import (
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


def _tokens_by_step(rows: list[dict[str, Any]]) -> dict[int, int]:
    out: dict[int, int] = {}
    for r in rows:
        out[r["step"]] = out.get(r["step"], 0) + r["tokens"]
    return out


def test_token_accounting_matches_the_model_usage(tmp_path: Path) -> None:
    log = run(tmp_path, "scripted/evolve-mixed", steps=2, parents_per_step=1,
              responses_per_parent=3)
    sample = log.samples[0]  # type: ignore[index]
    used = 0
    for event in sample.events:
        if isinstance(event, ModelEvent) and event.output.usage is not None:
            used += event.output.usage.input_tokens + event.output.usage.output_tokens
    summary = sample.store[STORE_SUMMARY]
    assert used > 0 and summary["tokens_used"] == used
    assert sum(r["tokens"] for r in candidates(log)) == used


def test_best_of_n_samples_only_the_initial_program_within_the_budget(tmp_path: Path) -> None:
    free = run(tmp_path, "scripted/evolve-improver", ckpt="free", steps=4, parents_per_step=1,
               responses_per_parent=2, num_islands=1, search="best_of_n")
    per_step = _tokens_by_step(candidates(free))
    assert len(per_step) == 4 and all(r["parent"] == "init-0" for r in candidates(free))
    budget = per_step[1] + 1  # step 1 leaves it unspent, step 2 spends it
    capped = run(tmp_path, "scripted/evolve-improver", ckpt="capped", steps=4,
                 parents_per_step=1, responses_per_parent=2, num_islands=1,
                 search="best_of_n", token_budget=budget)
    summary = capped.samples[0].store[STORE_SUMMARY]  # type: ignore[index]
    assert summary["steps_done"] == 2 and summary["stopped"] == "tokens"
    assert summary["tokens_used"] == per_step[1] + per_step[2] >= budget
    assert summary["search"] == "best_of_n" and summary["token_budget"] == budget
    # no evolution: every child is one edit of the initial program, so the best is one step
    # of the improver (at most +600 iterations), while ThetaEvolve compounds its edits
    evolved = run(tmp_path, "scripted/evolve-improver", ckpt="evolved", steps=4,
                  parents_per_step=1, responses_per_parent=2, num_islands=1, elite_size=1,
                  exploitation=1.0, token_budget=budget)
    evo = evolved.samples[0].store[STORE_SUMMARY]  # type: ignore[index]
    assert evo["tokens_used"] >= budget and evo["steps_done"] == 2
    assert evo["best_score"] > summary["best_score"] >= fitness(PROGRAM.replace("0", "200"))
    assert summary["best_score"] <= fitness(PROGRAM.replace("0", "600"))


def test_best_of_n_agent_is_the_baseline_of_the_same_loop(tmp_path: Path) -> None:
    from methods.thetaevolve.thetaevolve import best_of_n

    task = Task(dataset=[Sample(id="toy", input="Make ITERATIONS large.",
                                metadata={"initial_program": PROGRAM})],
                setup=use_tools(fake_evaluator()),
                solver=best_of_n(steps=2, responses_per_parent=3, evaluator_tool="fake_evaluator",
                                 checkpoint_dir=str(tmp_path / "ckpt")),
                scorer=match())
    log = inspect_eval(task, model="scripted/evolve-improver", display="none",
                       log_dir=str(tmp_path / "logs"))[0]
    rows = candidates(log)
    assert len(rows) == 6 and {r["parent"] for r in rows} == {"init-0"}
    assert log.samples[0].store[STORE_SUMMARY]["search"] == "best_of_n"  # type: ignore[index]


def test_summary_has_best_per_step_and_the_share_of_valid_diffs(tmp_path: Path) -> None:
    log = run(tmp_path, "scripted/evolve-mixed", steps=3, parents_per_step=2,
              responses_per_parent=2)
    rows = candidates(log)
    summary = log.samples[0].store[STORE_SUMMARY]  # type: ignore[index]
    diffs = [r for r in rows if policies.MODES[r["seed"] % 4] != "no_diff"]
    assert all(r["edit"] == "diff" for r in diffs)
    assert summary["diff_share"] == len(diffs) / len(rows) and 0 < summary["diff_share"] < 1
    assert summary["n_none"] == len(rows) - len(diffs) and summary["rewrite_share"] == 0
    best = summary["best_score_per_step"]
    assert len(best) == 4 and best[0] == summary["initial_score"] == fitness(PROGRAM)
    assert best == sorted(best) and best[-1] == summary["best_score"]
    for step in (1, 2, 3):
        valid = [r["score"] for r in rows if r["step"] <= step and r["outcome"] == "valid"]
        assert best[step] == max([best[0], *valid])


def test_full_rewrites_are_accepted_when_the_model_writes_no_diff(tmp_path: Path) -> None:
    on = run(tmp_path, "scripted/evolve-rewriter", ckpt="on", **GREEDY)
    rows = candidates(on)
    assert {r["edit"] for r in rows} == {"rewrite"} and {r["outcome"] for r in rows} == {"valid"}
    summary = on.samples[0].store[STORE_SUMMARY]  # type: ignore[index]
    assert summary["rewrite_share"] == 1.0 and summary["diff_share"] == 0.0
    assert summary["best_score"] > summary["initial_score"]
    off = run(tmp_path, "scripted/evolve-rewriter", ckpt="off", full_rewrite=False, **GREEDY)
    assert {r["outcome"] for r in candidates(off)} == {"no_diff"}
