"""The VIPO method task: the oracle scores 100 with exact predictions, ids are stable, a tiny
eval runs end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from inspect_ai import eval as inspect_eval

from benchmarks.paper_tasks.vipo import vipo as vipo_module
from environments.vipo import oracle_policy
from harness.method_tasks import summarise


def test_oracle_with_exact_predictions_scores_100_and_no_error() -> None:
    problem = vipo_module.OfflineProblem(episodes=2)
    inputs, truth = problem.prepare({"seed": 0, "quality": "medium"})
    assert inputs["obs"].shape == (2 * 199, 3) and inputs["query_actions"].shape[1] == 10
    perfect = {"policy": oracle_policy().tolist(), "pred_next": truth["next"],
               "pred_reward": truth["reward"], "pred_rollout": truth["rollout"],
               "mean_penalty": 0.0, "value_inconsistency": 0.0}
    s = problem.score(perfect, truth, {})
    assert np.isclose(s["norm_return"], 100.0) and s["model_error"] == 0.0
    assert s["rollout_error"] == 0.0 and s["reward_error"] == 0.0
    worse = problem.score({**perfect, "policy": [0] * len(oracle_policy())}, truth, {})
    assert worse["norm_return"] < 50


def test_ids_and_scale() -> None:
    assert vipo_module.record_to_sample({"seed": 100, "quality": "random"}).id == \
        "seed=100,quality=random"
    task = vipo_module.vipo(n_seeds=1, qualities="random,medium")
    assert [s.id for s in task.dataset] == ["seed=100,quality=random", "seed=100,quality=medium"]


@pytest.mark.slow
def test_vipo_runs_with_model_none(tmp_path: Path) -> None:
    task = vipo_module.vipo(n_seeds=2, qualities="random", episodes=2, model_steps=40)
    [log] = inspect_eval(task, model="none", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    rows = {r["metric"]: r for r in summarise(tmp_path)}
    assert {"norm_return", "model_error", "rollout_error", "reward_error"} <= set(rows)
    assert "delta" in rows["norm_return"] and rows["model_error"]["method"][0] > 0
