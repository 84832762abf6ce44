"""The method tasks: records to samples, default builds, and a tiny end-to-end eval each."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from benchmarks.paper_tasks.sika_gp import sika_gp as sika_module
from benchmarks.paper_tasks.tpg import tpg as tpg_module
from benchmarks.paper_tasks.treca import treca as treca_module
from harness.method_tasks import summarise


def test_record_to_sample_on_real_records() -> None:
    sample = tpg_module.record_to_sample({"seed": 3, "horizon": 2000})
    assert sample.id == "seed=3,horizon=2000"
    assert sample.metadata == {"cell": {"seed": 3, "horizon": 2000}}
    sample = treca_module.record_to_sample({"seed": 0, "n": 2000, "c": 0.2})
    assert sample.id == "seed=0,n=2000,c=0.2"
    assert sample.metadata and sample.metadata["cell"]["config"] == {"c": 0.2}
    sample = sika_module.record_to_sample({"seed": 1, "n": 2000, "m": 64})
    assert sample.id == "seed=1,n=2000,m=64"


def test_scale_multiplies_the_data_size_and_ids_are_stable() -> None:
    task = tpg_module.tpg_ab(n_seeds=2, scale=0.5)
    assert [s.id for s in task.dataset] == ["seed=0,horizon=1000", "seed=1,horizon=1000"]
    assert [s.id for s in tpg_module.tpg_ab(n_seeds=2, scale=0.5).dataset] == [
        s.id for s in task.dataset]


def test_an_unknown_method_names_the_family_members() -> None:
    with pytest.raises(ValueError, match="registered: .*tpg"):
        tpg_module.tpg_ab(method="nope")


@pytest.mark.parametrize("build", [
    lambda: tpg_module.tpg_ab(n_seeds=3, horizon=200),
    lambda: treca_module.treca(n_seeds=2, n=300, n_test=200, costs="0.2"),
    lambda: sika_module.sika_gp(n_seeds=2, n=200, n_test=50, ms="32"),
    lambda: tpg_module.tpg_ab(n_seeds=2, horizon=100, method="baseline", baseline="paper"),
])
@pytest.mark.slow
def test_each_method_task_runs_with_model_none(build, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    [log] = inspect_eval(build(), model="none", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    rows = summarise(tmp_path)
    metrics = {r["metric"] for r in rows}
    assert {"loss", "wall_s", "peak_mb"} <= metrics
    loss = next(r for r in rows if r["metric"] == "loss")
    assert "baseline" in loss and "delta" in loss  # both methods on the same cells
    assert loss["delta"][0] == pytest.approx(loss["method"][0] - loss["baseline"][0])
