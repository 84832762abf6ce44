"""The T2I concept-vector task: linearity metrics on known maps, ids, a tiny eval."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from inspect_ai import eval as inspect_eval

from benchmarks.paper_tasks.t2i_concepts import t2i_concepts as module
from harness.method_tasks import summarise


def test_linear_changes_score_as_linear() -> None:
    rng = np.random.default_rng(0)
    base, u, w = rng.random((3, 4, 3, 8, 8))
    linear = {s: base + s * u for s in module.SCALES}
    assert module.homogeneity(base, linear) == pytest.approx(1.0)
    assert module.additivity_error(base, base + u, base + w, base + u + w) == pytest.approx(0.0)
    saturating = {s: base + u for s in module.SCALES}  # the same change at every scale
    assert module.homogeneity(base, saturating) == pytest.approx(0.5)  # 1 - 1.5 / 3
    assert module.additivity_error(base, base + u, base + w, base + u) > 0.3


def test_ids_are_stable() -> None:
    assert module.record_to_sample({"seed": 101}).id == "seed=101"
    assert [s.id for s in module.t2i_concepts(n_seeds=2).dataset] == ["seed=100", "seed=101"]


@pytest.mark.slow
def test_t2i_concepts_runs_with_model_none(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    task = module.t2i_concepts(n_seeds=1, n_train=200, n_prompts=16, gen_steps=5,
                               concept_steps=3)
    [log] = inspect_eval(task, model="none", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    rows = {r["metric"]: r for r in summarise(tmp_path)}
    assert {"additivity_err", "homogeneity", "balance", "success_blue"} <= set(rows)
