"""The CoCoEdit method task: its metrics on known edits, ids, a tiny eval end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from inspect_ai import eval as inspect_eval

from benchmarks.paper_tasks.cocoedit import cocoedit as module
from environments.cocoedit import leaky_targets, make_edit_set
from harness.method_tasks import summarise


def test_scores_tell_the_ideal_edit_from_a_leaky_one() -> None:
    e = make_edit_set(40, seed=5)
    ideal = module.edit_scores(e.target, e.source, e.target, e.mask, e.colour)
    leaky = module.edit_scores(leaky_targets(e, 0.35), e.source, e.target, e.mask, e.colour)
    unedited = module.edit_scores(e.source, e.source, e.target, e.mask, e.colour)
    assert ideal["success"].all() and leaky["success"].all() and not unedited["success"].any()
    assert np.allclose(ideal["psnr_out"], 60.0) and (leaky["psnr_out"] < 25).all()
    assert np.allclose(unedited["psnr_out"], 60.0)


def test_ids_are_stable() -> None:
    assert module.record_to_sample({"seed": 100}).id == "seed=100"
    task = module.cocoedit(n_seeds=3)
    assert [s.id for s in task.dataset] == ["seed=100", "seed=101", "seed=102"]


def test_problem_hides_the_test_masks() -> None:
    inputs, truth = module.EditProblem(50, 20, 10).prepare({"seed": 1})
    assert set(inputs["test"]) == {"source", "instruction"} and truth.mask.shape == (10, 12, 12)
    assert not np.array_equal(inputs["rl"]["source"][:10], truth.source)


@pytest.mark.slow
def test_cocoedit_runs_with_model_none(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    task = module.cocoedit(n_seeds=1, n_pretrain=64, n_rl=32, n_test=16, pretrain_steps=5,
                           rl_steps=3)
    [log] = inspect_eval(task, model="none", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    rows = {r["metric"]: r for r in summarise(tmp_path)}
    assert {"psnr_out", "edit_success", "pre_psnr_out", "wall_s"} <= set(rows)
