"""The PolySAE method task: stable ids, the scorer's numbers, and a synthetic run where the
polynomial decoder must beat its TopK baseline on the same seed."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from inspect_ai import eval as inspect_eval

import methods.polysae.sae  # noqa: F401  (registers polysae, topk-sae)
from benchmarks.paper_tasks.polysae import polysae as task_module
from harness.method_tasks import summarise

needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                 reason="needs the cpu extra (torch)")


def test_ids_and_defaults() -> None:
    assert task_module.record_to_sample({"seed": 101}).id == "seed=101"
    task = task_module.polysae(n_seeds=2)
    assert [s.id for s in task.dataset] == ["seed=100", "seed=101"]
    assert task.version == task_module.VERSION
    with pytest.raises(ValueError):
        task_module.SAEProblem("gpt2", 8, 8, 15, 4)


def test_score_counts_l0_overhead_and_cooccurrence() -> None:
    """A hand-made output: FVU, L0, the overhead formula and the r of a weight that *is*
    the co-occurrence come out as computed by hand."""
    rng = np.random.default_rng(0)
    test = rng.normal(size=(300, 4)).astype(np.float32)
    idx = np.stack([rng.choice(10, 2, replace=False) for _ in range(300)]).astype(np.int32)
    val = rng.uniform(0.5, 1.0, size=(300, 2)).astype(np.float32)
    active = np.zeros((300, 10), bool)
    np.put_along_axis(active, idx, True, axis=1)
    cooc = active.T.astype(float) @ active / 300
    outputs = {"recon": test * 0.5, "test_idx": idx, "test_val": val, "m": 10, "k": 2,
               "n_params": 2 * 4 * 10 + 10 + 4 + 20, "dead_frac": 0.0, "interaction": cooc}
    problem = task_module.SAEProblem("synthetic", 8, 8, 15, 4)
    scores = problem.score(outputs, {"test": test}, {"seed": 0})
    assert scores["l0"] == 2.0
    assert scores["param_overhead"] == pytest.approx(20 / (2 * 4 * 10 + 10 + 4))
    expected = float(((test * 0.5) ** 2).sum() / ((test - test.mean(0)) ** 2).sum())
    assert scores["fvu"] == pytest.approx(expected, rel=1e-5)
    assert scores["interaction_cooc_r"] == pytest.approx(1.0)
    assert scores["loss"] == scores["fvu"]  # no probes on synthetic data


@needs_torch
@pytest.mark.slow
def test_synthetic_run_pairs_polysae_with_topk(tmp_path: Path) -> None:
    """Fails if the method is replaced by its baseline: the paired FVU difference would be
    0 and the overhead 0."""
    task = task_module.polysae(n_seeds=1, data="synthetic", steps=300)
    [log] = inspect_eval(task, model="none", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    rows = {r["metric"]: r for r in summarise(tmp_path)}
    values: dict[str, float] = log.samples[0].scores["method_metrics"].value  # type: ignore[index,assignment]
    assert values["fvu"] < 0.95 * values["baseline_fvu"], values  # 0.073 vs 0.079
    assert values["param_overhead"] > 0.1 and values["baseline_param_overhead"] == 0.0
    assert "interaction_cooc_r" in values and "baseline_interaction_cooc_r" not in values
    assert {"fvu", "cov_cooc_r", "wall_s"} <= set(rows)
