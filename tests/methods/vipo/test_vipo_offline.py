"""VIPO vs MOPO: the inconsistency term is the only difference, and it makes the model more
accurate where the data is thin."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.paper_tasks.vipo.vipo import OfflineProblem
from methods.vipo.offline import _returns, mopo, vipo


def test_returns_restart_at_each_episode() -> None:
    r = np.array([1.0, 1.0, 1.0, 2.0])
    ep = np.array([0, 0, 0, 1])
    assert np.allclose(_returns(r, ep, np.arange(4), 0.5), [1.75, 1.5, 1.0, 2.0])


@pytest.mark.slow
def test_without_its_term_vipo_is_mopo() -> None:
    inputs, _ = OfflineProblem(episodes=2).prepare({"seed": 0, "quality": "random"})
    config = {"model_steps": 60}
    assert vipo(inputs, {**config, "alpha": 0.0}, 0) == mopo(inputs, config, 0)


@pytest.mark.slow
def test_vipo_model_is_more_accurate_than_mopos() -> None:
    """Fails if ``vipo`` is replaced by ``mopo``: on random (bottom-only) data the value term
    lowers the model's 10-step error on the states a good policy visits."""
    problem = OfflineProblem()
    inputs, truth = problem.prepare({"seed": 1, "quality": "random"})
    ours = problem.score(vipo(inputs, {}, 1), truth, {})
    base = problem.score(mopo(inputs, {}, 1), truth, {})
    assert ours["rollout_error"] < 0.7 * base["rollout_error"]
