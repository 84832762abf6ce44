"""The KUP-BI method task: ids, the horizon scale, and a tiny eval end to end."""

from __future__ import annotations

from pathlib import Path

from inspect_ai import eval as inspect_eval

from benchmarks.paper_tasks.kupbi import kupbi as kupbi_module
from harness.method_tasks import summarise


def test_ids_and_samples() -> None:
    assert kupbi_module.record_to_sample({"series": "co2", "seed": 100}).id == (
        "series=co2,seed=100")
    task = kupbi_module.kupbi(n_seeds=2, series="sunspots")
    assert [s.id for s in task.dataset] == ["series=sunspots,seed=100", "series=sunspots,seed=101"]


def test_kupbi_runs_with_model_none(tmp_path: Path) -> None:
    task = kupbi_module.kupbi(n_seeds=1, series="elnino", lookback=24, horizon=6,
                              continuation=6)
    [log] = inspect_eval(task, model="none", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    rows = {r["metric"]: r for r in summarise(tmp_path)}
    assert {"mse", "mae", "wall_s"} <= set(rows)
