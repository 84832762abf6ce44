"""The Rubik HMM method task: scores come from exact distances, ids are stable, a tiny eval
runs end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from inspect_ai import eval as inspect_eval

from benchmarks.paper_tasks.rubik_hmm import rubik_hmm as rubik_module
from harness.method_tasks import summarise


def test_exact_heuristic_scores_perfectly_and_constant_is_chance() -> None:
    problem = rubik_module.HeuristicProblem(budget=200, n_rank=1000, n_search=5)
    inputs, truth = problem.prepare({"seed": 0, "walks": 20})
    assert inputs["walks"].shape == (20, 41)
    exact = problem.score({"h": truth[0].dist.tolist()}, truth, {})
    assert exact["rank_acc"] == 1.0 and exact["mae"] == 0.0 and exact["success_w1"] == 1.0
    assert exact["excess_w1"] == 0.0 and exact["spearman"] > 0.999
    flat = problem.score({"h": [0.0] * len(truth[0].dist)}, truth, {})
    assert flat["rank_acc"] == 0.5 and flat["success_w1"] == 0.0 and "excess_w1" not in flat


def test_ids_and_scale() -> None:
    assert rubik_module.record_to_sample({"seed": 100, "walks": 400}).id == "seed=100,walks=400"
    task = rubik_module.rubik_hmm(n_seeds=2, scale=0.5)
    assert [s.id for s in task.dataset] == ["seed=100,walks=200", "seed=101,walks=200"]


@pytest.mark.slow
def test_rubik_hmm_runs_with_model_none(tmp_path: Path) -> None:
    task = rubik_module.rubik_hmm(n_seeds=2, walks=40, rounds=2, epochs=2, budget=50)
    [log] = inspect_eval(task, model="none", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    rows = {r["metric"]: r for r in summarise(tmp_path)}
    assert {"rank_acc", "success_w1", "nodes_w1", "mae", "wall_s"} <= set(rows)
    assert 0.4 < rows["rank_acc"]["method"][0] < 1.0 and "delta" in rows["rank_acc"]
    assert np.isfinite(rows["nodes_w2"]["baseline"][0])
