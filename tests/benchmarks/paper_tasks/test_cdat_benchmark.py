"""The CDAT method task: AUROC is right, ids are stable, a tiny eval runs end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from inspect_ai import eval as inspect_eval

from benchmarks.paper_tasks.cdat import cdat as cdat_module
from harness.method_tasks import summarise
from methods.cdat.energy import cdat as cdat_method


def test_auroc_counts_ordered_pairs_with_ties_halved() -> None:
    assert cdat_module.auroc(np.array([0.1, 0.4, 0.35, 0.8]), np.array([0, 0, 1, 1])) == 0.75
    assert cdat_module.auroc(np.array([1.0, 1.0]), np.array([0, 1])) == 0.5


def test_monotone_is_scored_on_the_fixed_step_trace_and_can_fail() -> None:
    problem = cdat_module.AnomalyProblem()
    inputs, truth = problem.prepare({"seed": 100, "n": 500})
    rising = problem.score(cdat_method(inputs, {"step": 2.0}, 100), truth, {})
    falling = problem.score(cdat_method(inputs, {"step": 0.1}, 100), truth, {})
    assert rising["monotone"] == 0.0 and rising["energy_rises"] >= 3
    assert falling["monotone"] == 1.0 and rising["backtracks"] > 0


def test_ids_and_scale() -> None:
    assert cdat_module.record_to_sample({"seed": 100, "n": 500}).id == "seed=100,n=500"
    task = cdat_module.cdat(n_seeds=1, ns="1000", scale=0.5)
    assert [s.id for s in task.dataset] == ["seed=100,n=500"]


@pytest.mark.slow
def test_cdat_runs_with_model_none(tmp_path: Path) -> None:
    task = cdat_module.cdat(n_seeds=2, ns="300", steps=5)
    [log] = inspect_eval(task, model="none", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    rows = {r["metric"]: r for r in summarise(tmp_path)}
    assert {"auroc", "monotone", "energy_rises", "wall_s"} <= set(rows)
    assert rows["monotone"]["method"][0] == 1.0 and "delta" in rows["auroc"]
