"""The Tab-PE method task: metrics on known tables, ids, a tiny eval end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from inspect_ai import eval as inspect_eval

from benchmarks.paper_tasks.tabpe import tabpe as tabpe_module
from harness.method_tasks import summarise


def test_tvd_and_match_accuracy() -> None:
    a = np.array([[0, 0], [1, 1]])
    assert tabpe_module.marginal_tvd(a, a, (2, 2), 2) == 0.0
    assert tabpe_module.marginal_tvd(a, np.array([[0, 1], [1, 0]]), (2, 2), 2) == 1.0
    assert tabpe_module.match_accuracy(a, a) == 1.0


def test_ids() -> None:
    sample = tabpe_module.record_to_sample({"seed": 100, "table": "fair", "n": 2000,
                                            "epsilon": 3})
    assert sample.id == "seed=100,table=fair,n=2000,epsilon=3.0"


@pytest.mark.slow
def test_tabpe_runs_with_model_none(tmp_path: Path) -> None:
    task = tabpe_module.tabpe(n_seeds=1, n=300, tables="parity,fair", epsilons="3",
                              population=64, iterations=2)
    [log] = inspect_eval(task, model="none", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    rows = {r["metric"]: r for r in summarise(tmp_path)}
    assert {"accuracy", "tvd1", "tvd4", "wall_s"} <= set(rows) and "delta" in rows["accuracy"]
