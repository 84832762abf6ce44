"""The Inspect scorer's metrics treat infra failures as ``grading.aggregate`` does:
excluded from the means and counted (one fixture, both sides)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from benchmarks.formulacode.grading import aggregate
from benchmarks.formulacode.scorer import METRICS, score_value

ROWS = Path(__file__).parents[2] / "environments" / "formulacode" / "data" / "infra_rows.json"


@scorer(metrics=METRICS)
def replay() -> Scorer:
    """Scores each sample with the scorer's own value mapping of its fixture row."""

    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=score_value(state.metadata["row"]))

    return score


@solver
def nothing() -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return state

    return solve


def test_infra_failures_are_excluded_and_counted_like_aggregate(tmp_path: Path) -> None:
    rows: list[dict[str, Any]] = json.loads(ROWS.read_text())["rows"]
    assert score_value(rows[2])["advantage"] != score_value(rows[2])["advantage"]  # NaN
    samples = [Sample(id=i, input="x", metadata={"row": r}) for i, r in enumerate(rows)]
    log = eval(Task(dataset=samples, solver=nothing(), scorer=replay()), model="none",
               log_dir=str(tmp_path), display="none")[0]
    assert log.status == "success" and log.results
    got = {s.name: {k: v.value for k, v in s.metrics.items()} for s in log.results.scores}
    agg = aggregate(rows)
    assert got["advantage"]["mean"] == pytest.approx(agg["advantage_overall"])
    assert got["advantage_raw"]["mean"] == pytest.approx(agg["advantage_raw_overall"])
    assert got["advantage_ratio"]["geometric_mean"] == pytest.approx(
        agg["advantage_ratio_geomean"])
    assert got["speedup"]["geometric_mean"] == pytest.approx(agg["speedup_geomean"])
    assert got["speedup"]["mean"] == pytest.approx(agg["speedup_mean"])
    assert got["success"]["mean"] == pytest.approx(agg["success_rate"])
    assert got["infra_failure"]["total"] == agg["infra_failures"] == 2
    assert got["infra_failure"]["mean"] == pytest.approx(agg["infra_failure_rate"])
