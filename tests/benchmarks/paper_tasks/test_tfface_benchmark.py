"""The TF-FACE method task: the metrics against brute force, ids and scale, and a tiny eval
end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from inspect_ai import eval as inspect_eval

from benchmarks.paper_tasks.tfface import tfface as tfface_module
from harness.method_tasks import summarise


def test_metrics_match_a_brute_force_loop() -> None:
    rng = np.random.default_rng(0)
    pred = rng.normal(size=(7, 6, 30, 2)) * 3
    true = rng.normal(size=(7, 30, 2)) * 3
    probs = rng.dirichlet(np.ones(6), size=7)
    got = tfface_module.trajectory_metrics(pred, probs, true)
    ades, fdes, misses, briers = [], [], [], []
    for i in range(7):
        ade = [np.mean([np.hypot(*(pred[i, k, t] - true[i, t])) for t in range(30)])
               for k in range(6)]
        fde = [np.hypot(*(pred[i, k, -1] - true[i, -1])) for k in range(6)]
        best = int(np.argmin(fde))
        ades.append(min(ade))
        fdes.append(fde[best])
        misses.append(fde[best] > 2.0)
        briers.append(fde[best] + (1 - probs[i, best]) ** 2)
    assert got["minade"] == pytest.approx(np.mean(ades))
    assert got["minfde"] == pytest.approx(np.mean(fdes))
    assert got["miss_rate"] == pytest.approx(np.mean(misses))
    assert got["brier_minfde"] == pytest.approx(np.mean(briers))
    # a perfect mode among the six gives zero errors
    pred[:, 2] = true
    assert tfface_module.trajectory_metrics(pred, probs, true)["minade"] == 0.0


def test_record_to_sample_ids_and_scale() -> None:
    sample = tfface_module.record_to_sample({"seed": 100, "n_train": 2000})
    assert sample.id == "seed=100,n_train=2000"
    assert sample.metadata == {"cell": {"seed": 100, "n_train": 2000}}
    task = tfface_module.tfface(n_seeds=2, scale=0.5)
    assert [s.id for s in task.dataset] == ["seed=100,n_train=1000", "seed=101,n_train=1000"]


def test_prepare_gives_the_methods_no_test_future() -> None:
    problem = tfface_module.TrajectoryProblem(n_test=20, n_hist=20, n_fut=30)
    inputs, truth = problem.prepare({"seed": 5, "n_train": 50})
    assert inputs["train_history"].shape == (50, 20, 2) and inputs["test_history"].shape == (
        20, 20, 2)
    assert truth.future.shape == (20, 30, 2)
    assert not any(np.shares_memory(v, truth.future) for v in inputs.values()
                   if isinstance(v, np.ndarray))


@pytest.mark.slow
def test_tfface_runs_with_model_none(tmp_path: Path) -> None:
    task = tfface_module.tfface(n_seeds=2, n_train=128, n_test=40, steps=10, batch=32)
    [log] = inspect_eval(task, model="none", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    rows = {r["metric"]: r for r in summarise(tmp_path)}
    assert {"minade", "minfde", "miss_rate", "brier_minfde", "params", "wall_s"} <= set(rows)
    loss = rows["loss"]
    assert "baseline" in loss and "delta" in loss
    assert loss["delta"][0] == pytest.approx(loss["method"][0] - loss["baseline"][0])


def test_constant_velocity_runs_as_the_method(tmp_path: Path) -> None:
    task = tfface_module.tfface(n_seeds=1, n_train=64, n_test=20, method="constant-velocity",
                                baseline="none")
    [log] = inspect_eval(task, model="none", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
