"""The MetaMoE method task: scoring is exact, ids are stable, a tiny eval runs end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from inspect_ai import eval as inspect_eval

from benchmarks.paper_tasks.metamoe import metamoe as metamoe_module
from harness.method_tasks import summarise


def test_score_counts_routes_labels_and_proxies() -> None:
    problem = metamoe_module.FederationProblem(n_public=600)
    inputs, truth = problem.prepare({"seed": 0, "clients": 3})
    own = [np.flatnonzero(truth.public_domain == k)[:4] for k in range(3)]
    out = {"pred": truth.test_y.tolist(), "route": truth.test_domain.tolist(),
           "selected": [o.tolist() for o in own]}
    assert problem.score(out, truth, {}) == {"loss": 0.0, "accuracy": 1.0,
                                             "routing_accuracy": 1.0, "proxy_precision": 1.0}
    flipped = {**out, "pred": (1 - truth.test_y).tolist(), "route": [-1] * len(truth.test_y),
               "selected": []}
    assert problem.score(flipped, truth, {})["accuracy"] == 0.0
    assert "proxy_precision" not in problem.score(flipped, truth, {})


def test_ids_defaults_and_scale() -> None:
    assert metamoe_module.record_to_sample({"seed": 100, "clients": 6}).id == "seed=100,clients=6"
    task = metamoe_module.metamoe(n_seeds=2, clients=4)
    assert [s.id for s in task.dataset] == ["seed=100,clients=4", "seed=101,clients=4"]
    assert task.metadata["method"] == "metamoe" and task.metadata["baseline"] == "relevance-proxies"


@pytest.mark.slow
def test_metamoe_runs_with_model_none(tmp_path: Path) -> None:
    task = metamoe_module.metamoe(n_seeds=2, clients=3, scale=0.25)
    [log] = inspect_eval(task, model="none", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    rows = {r["metric"]: r for r in summarise(tmp_path)}
    assert {"accuracy", "routing_accuracy", "proxy_precision", "wall_s"} <= set(rows)
    assert 0.5 < rows["accuracy"]["method"][0] <= 1.0 and "delta" in rows["accuracy"]
