"""The HFM method task: accuracy scoring, stable ids, and a tiny eval end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from inspect_ai import eval as inspect_eval

from benchmarks.paper_tasks.hfm import hfm as hfm_module
from environments.hfm import make_episode
from harness.method_tasks import summarise


def test_scores_count_correct_queries() -> None:
    ep = make_episode(0, 1, np.random.default_rng(0).standard_normal((10, 16)))
    problem = hfm_module.FewShotProblem()
    perfect = problem.score({"pred": ep.query_y, "nfe": 8, "steps_taken": 8}, ep, {})
    wrong = problem.score({"pred": (ep.query_y + 1) % 5, "nfe": 8, "steps_taken": 8}, ep, {})
    assert perfect["accuracy"] == 1.0 and perfect["worst_class_accuracy"] == 1.0
    assert wrong["accuracy"] == 0.0 and wrong["loss"] == 1.0
    assert 0.0 <= perfect["zero_shot_accuracy"] <= 1.0


def test_ids_and_shots() -> None:
    assert hfm_module.record_to_sample({"seed": 100, "shots": 4}).id == "seed=100,shots=4"
    task = hfm_module.hfm(n_seeds=2, shots="1,16")
    assert [s.id for s in task.dataset] == ["seed=100,shots=1", "seed=101,shots=1",
                                            "seed=100,shots=16", "seed=101,shots=16"]


@pytest.mark.slow
def test_hfm_runs_with_model_none(tmp_path: Path) -> None:
    task = hfm_module.hfm(n_seeds=1, shots="4", train_steps=60)
    [log] = inspect_eval(task, model="none", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    rows = {r["metric"]: r for r in summarise(tmp_path)}
    assert {"accuracy", "steps_taken", "zero_shot_accuracy"} <= set(rows)
