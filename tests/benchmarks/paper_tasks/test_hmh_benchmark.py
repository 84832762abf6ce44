"""The HMH method task: stable ids, scale, and a tiny end-to-end eval with a baseline."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from benchmarks.paper_tasks.hmh import hmh as hmh_module
from harness.method_tasks import summarise


def test_record_to_sample_and_scale() -> None:
    assert hmh_module.record_to_sample({"seed": 2, "n": 500}).id == "seed=2,n=500"
    task = hmh_module.hmh(n_seeds=1, ns="400,800", scale=0.5)
    assert [s.id for s in task.dataset] == ["seed=0,n=200", "seed=0,n=400"]


@pytest.mark.slow
def test_hmh_runs_with_model_none(tmp_path: Path) -> None:
    task = hmh_module.hmh(n_seeds=2, ns="200", baseline="gcn")
    [log] = inspect_eval(task, model="none", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    rows = {r["metric"]: r for r in summarise(tmp_path)}
    assert {"accuracy", "hub_accuracy", "wall_s", "n_nodes"} <= set(rows)
    assert 0.0 <= rows["accuracy"]["method"][0] <= 1.0 and "delta" in rows["accuracy"]
