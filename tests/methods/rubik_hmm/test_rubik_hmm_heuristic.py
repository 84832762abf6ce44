"""HMM soft labels: forward-backward is right on a known chain, the dynamics estimate reads
rises, and the trained heuristic ranks better than scramble depth's."""

from __future__ import annotations

import numpy as np
import pytest

from environments.rubik_hmm import local_ranking_accuracy, puzzle, scramble
from methods.rubik_hmm.heuristic import estimate_p_up, hmm_soft, scramble_depth, soft_labels


def test_soft_labels_follow_sharp_emissions_and_the_start() -> None:
    truth = np.array([[0, 1, 2, 1, 2, 3, 2, 1]], dtype=float)
    post = soft_labels(truth, np.full(9, 0.5), sigma=0.3)
    assert np.allclose(post, truth, atol=1e-3)
    flat = soft_labels(np.full((1, 8), 5.0), np.full(9, 0.5), sigma=100.0)
    assert flat[0, 0] == 0.0 and abs(flat[0, 1] - 1.0) < 1e-9  # step 1 must be depth 1
    assert (flat[0] <= np.arange(8) + 1e-9).all()


def test_estimate_p_up_counts_rises_by_depth() -> None:
    pred = np.array([[0.0, 1.0, 2.0, 1.0, 2.0, 3.0]])
    p = estimate_p_up(pred, 5)
    assert p[0] == 1.0 and p[1] == (2 + 1) / (2 + 2) and p[2] == (1 + 1) / (2 + 2)
    assert p[3] == 0.5  # no data: the pseudo-counts


@pytest.mark.slow
def test_hmm_labels_rank_better_than_scramble_depth() -> None:
    """Fails if ``hmm-soft`` is replaced by its baseline: on the same walks and budget the
    soft labels give a heuristic that orders neighbours better against exact distances."""
    p = puzzle()
    walks = scramble(p, 400, 40, seed=2)
    sample = np.random.default_rng(2).integers(0, len(p.dist), 3000)
    config = {"rounds": 4, "epochs": 5}  # the task's defaults (smaller budgets can reverse it)
    inputs = {"states": p.states, "walks": walks}
    ours = np.asarray(hmm_soft(inputs, config, 2)["h"], dtype=float)
    base = np.asarray(scramble_depth(inputs, config, 2)["h"], dtype=float)
    assert local_ranking_accuracy(p, ours, sample) > local_ranking_accuracy(p, base, sample) + 0.01
    assert np.abs(ours - p.dist).mean() < np.abs(base - p.dist).mean() - 2
