"""The U-Cast method task: ids, the scale, the scores, and a tiny eval end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from inspect_ai import eval as inspect_eval

from benchmarks.paper_tasks.ucast import ucast as ucast_module
from harness.method_tasks import summarise


def test_ids_samples_and_scale() -> None:
    assert ucast_module.record_to_sample({"seed": 100}).id == "seed=100"
    task = ucast_module.ucast(n_seeds=2)
    assert [s.id for s in task.dataset] == ["seed=100", "seed=101"]
    problem = ucast_module.EnsembleProblem(1000, 8, 2, 4, 0.3, 4)
    inputs, truth = problem.prepare({"seed": 100})
    assert inputs["train_inputs"].shape == (1000, 40) and truth["targets"].shape == (2, 8, 40)


def test_scores_of_a_perfect_and_a_persistence_ensemble() -> None:
    problem = ucast_module.EnsembleProblem(200, 16, 2, 4, 0.3, 4)
    inputs, truth = problem.prepare({"seed": 0})
    perfect = np.repeat(truth["targets"][:, None], 4, axis=1)
    scores = problem.score({"ensemble": perfect}, truth, {"seed": 0})
    assert scores["loss"] == scores["crps"] == 0.0 and scores["rmse"] == 0.0
    stay = np.broadcast_to(inputs["test_inputs"], (2, 4, 16, 40))
    scores = problem.score({"ensemble": stay}, truth, {"seed": 0})
    assert scores["crps_lead2"] > scores["crps_lead1"] > 0.3  # the state has moved on
    assert scores["ssr"] == 0.0 and scores["ssr_gap"] == 1.0


@pytest.mark.slow
def test_ucast_runs_with_model_none(tmp_path: Path) -> None:
    task = ucast_module.ucast(n_seeds=1, n_train=256, n_test=16, members=4, channels=4,
                              pretrain_steps=20, finetune_steps=10, train_members=2)
    [log] = inspect_eval(task, model="none", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    rows = {r["metric"]: r for r in summarise(tmp_path)}
    assert {"crps", "rmse", "ssr", "ssr_gap", "crps_lead2", "wall_s"} <= set(rows)
