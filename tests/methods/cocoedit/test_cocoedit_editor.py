"""CoCoEdit vs GRPO on the edit reward: the rewards, and the region term's effect."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.paper_tasks.cocoedit.cocoedit import EditProblem

torch = pytest.importorskip("torch")

from methods.cocoedit.editor import cocoedit, edit_reward, grpo_edit, outside_psnr  # noqa: E402


def test_edit_reward_sees_only_the_region() -> None:
    src = torch.zeros(1, 3, 4, 4)
    mask = torch.zeros(1, 4, 4)
    mask[0, :2, :2] = 1.0
    colour = torch.tensor([[1.0, 0.0, 0.0]])
    good = src.clone()
    good[0, 0, :2, :2] = 1.0
    leaky = good.clone()
    leaky[0, 0, 2:, :] = 1.0  # the same edit, plus changes outside
    assert edit_reward(good, mask, colour).item() == pytest.approx(1.0)
    assert edit_reward(leaky, mask, colour).item() == pytest.approx(1.0)
    assert outside_psnr(good, src, mask).item() == pytest.approx(60.0)
    assert outside_psnr(leaky, src, mask).item() < 10.0


@pytest.mark.slow
def test_region_term_restores_consistency_that_edit_reward_rl_leaves() -> None:
    """Fails if CoCoEdit is replaced by its baseline: from the same leaky pre-trained
    editor, only the region-regularised run removes the tint outside the region, and it
    keeps the edit."""
    problem = EditProblem(n_pretrain=800, n_rl=256, n_test=100)
    cell = {"seed": 7}
    inputs, truth = problem.prepare(cell)
    config = {"pretrain_steps": 250, "rl_steps": 150}
    ours = problem.score(cocoedit(inputs, config, 7), truth, cell)
    base = problem.score(grpo_edit(inputs, config, 7), truth, cell)
    assert np.isclose(ours["pre_psnr_out"], base["pre_psnr_out"])  # same start
    assert ours["psnr_out"] > base["psnr_out"] + 5.0
    assert ours["psnr_out"] > ours["pre_psnr_out"] + 3.0
    assert ours["edit_success"] >= base["edit_success"] - 0.1
