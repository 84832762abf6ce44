"""The method-task adapter: registering plain methods, running them (in process, in a
fresh worker, in the bwrap sandbox), the scores with a paired baseline, the summary."""

from __future__ import annotations

import json
import pickle
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval

from harness import method_worker, registry
from harness.method_tasks import (
    cell_sample,
    method_task,
    run_method,
    study_markdown,
    study_pairs,
    summarise,
    summary_markdown,
)
from harness.plugins.plain_method import method_names, plain_method, resolve_method

FAMILY = "toy_mean"


def toy_mean(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """The sample mean (plus a configurable offset)."""
    values = [float(v) for v in inputs["values"]]
    return {"estimate": sum(values) / len(values) + float(config.get("offset", 0.0))}


def toy_first(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """The first value: a worse estimator of the mean."""
    return {"estimate": float(inputs["values"][0])}


class ToyProblem:
    def prepare(self, cell: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
        seed = int(cell["seed"])
        values = [seed + i for i in range(5)]  # mean seed + 2
        return {"values": values}, seed + 2.0

    def score(self, outputs: Mapping[str, Any], truth: Any,
              cell: Mapping[str, Any]) -> dict[str, float]:
        return {"loss": abs(float(outputs["estimate"]) - truth)}


@pytest.fixture
def toy_family() -> Iterator[None]:
    plain_method("toy-mean", family=FAMILY)(toy_mean)
    plain_method("toy-first", family=FAMILY, role="baseline")(toy_first)
    yield
    registry.unregister("plain_method", "toy-mean")
    registry.unregister("plain_method", "toy-first")


def _task(**kwargs: Any) -> Any:
    samples = [cell_sample({"seed": s}) for s in range(3)]
    return method_task(name="toy", family=FAMILY, problem=ToyProblem(), samples=samples,
                       version="1.0.0", **{"method": "toy-mean", "baseline": "toy-first",
                                           **kwargs})


def test_lookup_by_name_and_by_role(toy_family: None) -> None:
    assert set(method_names(FAMILY)) == {"toy-mean", "toy-first"}
    assert resolve_method(FAMILY, "paper").name == "toy-mean"
    assert resolve_method(FAMILY, "baseline").name == "toy-first"
    with pytest.raises(registry.RegistryError, match="registered: toy-first, toy-mean"):
        resolve_method(FAMILY, "toy-median")
    with pytest.raises(registry.RegistryError, match="role"):
        plain_method("x", family=FAMILY, role="hero")


def test_run_method_measures_time_and_memory() -> None:
    run = run_method(lambda i, c, s: {"big": bytearray(8 * 2**20)}, {}, {}, 0)
    assert run.wall_s >= 0 and 7.5 < run.peak_mb < 12


def test_method_and_baseline_on_the_same_cells(toy_family: None, tmp_path: Path) -> None:
    task = _task(config={"offset": 0.5})
    assert [s.id for s in task.dataset] == ["seed=0", "seed=1", "seed=2"]
    [log] = inspect_eval(task, model="none", log_dir=str(tmp_path), display="none")
    assert log.status == "success"
    assert log.samples is not None
    value: Any = log.samples[0].scores["method_metrics"].value  # type: ignore[index]
    assert value["loss"] == pytest.approx(0.5)           # the mean, offset by 0.5
    assert value["baseline_loss"] == pytest.approx(2.0)  # the first value misses by 2
    assert value["delta_loss"] == pytest.approx(-1.5)
    assert {"wall_s", "peak_mb", "baseline_wall_s"} <= set(value)
    [row] = [r for r in summarise(tmp_path) if r["metric"] == "loss"]
    assert row["delta"][0] == pytest.approx(-1.5) and row["delta"][3] == 3
    assert "| toy | loss | 3 |" in summary_markdown([{**row, "task": "toy"}])


def test_study_pairs_reads_factor_levels_and_pairs_the_roles(toy_family: None,
                                                              tmp_path: Path) -> None:
    """What a study writes (factor levels in the eval metadata), paired per level."""
    from inspect_ai import task_with

    for role, method in (("paper", "toy-mean"), ("baseline", "toy-first")):
        for scale in ("1.0", "2.0"):
            task = task_with(_task(method=method, baseline=None, config={"offset": 0.5}),
                             metadata={"factors": {"role": role, "scale": scale}})
            inspect_eval(task, model="none", log_dir=str(tmp_path), display="none")
    rows = study_pairs(tmp_path, factor="scale")
    assert [r["scale"] for r in rows] == ["1.0", "2.0"]
    for row in rows:
        assert row["paper"][0] == pytest.approx(0.5)  # the offset mean misses by 0.5
        assert row["baseline"][0] == pytest.approx(2.0)  # the first value by 2
        assert row["delta"][0] == pytest.approx(-1.5) and row["delta"][3] == 3
        assert row["errored"] == 0 and row["unpaired"] == 0
    assert f"| {rows[0]['task']} | 1.0 | 3 |" in study_markdown(rows)


def test_a_bad_sandbox_or_unknown_method_is_refused(toy_family: None) -> None:
    with pytest.raises(ValueError, match="sandbox"):
        _task(sandbox="docker")
    with pytest.raises(registry.RegistryError):
        _task(method="nope")
    assert _task(baseline="none").metadata["baseline"] is None


def test_the_worker_runs_a_method_by_import_path(tmp_path: Path) -> None:
    job = {"target": f"{__name__}:toy_mean", "inputs": {"values": [1, 2, 3]},
           "config": {}, "seed": 0}
    (tmp_path / "in.pkl").write_bytes(pickle.dumps(job))
    assert method_worker.main([str(tmp_path / "in.pkl"), str(tmp_path / "out.json")]) == 0
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["outputs"] == {"estimate": 2.0} and out["peak_mb"] > 0


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_a_method_runs_in_the_bwrap_sandbox(tmp_path: Path) -> None:
    # a registered method from the suite: the worker imports it inside the sandbox
    samples = [cell_sample({"seed": s, "horizon": 100}) for s in range(2)]
    from benchmarks.paper_tasks.tpg.tpg import MarkovABProblem

    task = method_task(name="tpg_ab", family="markov_ab", problem=MarkovABProblem(0.5),
                       samples=samples, method="tpg", baseline="dim", version="1.0.0",
                       config={"k": 2}, sandbox="bwrap", timeout_s=120)
    [log] = inspect_eval(task, model="none", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    assert log.samples is not None
    value: Any = log.samples[0].scores["method_metrics"].value  # type: ignore[index]
    assert value["peak_mb"] > 1  # the worker's resident set, not a traced peak
