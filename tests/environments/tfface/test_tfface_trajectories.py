"""The synthetic intersection trajectories: seeded, agent-centric, genuinely multimodal."""

from __future__ import annotations

import numpy as np

from environments.tfface import MODES, make_split, make_trajectories


def test_same_seed_same_data_and_shapes() -> None:
    a, b = make_trajectories(50, seed=7), make_trajectories(50, seed=7)
    assert a.history.shape == (50, 20, 2) and a.future.shape == (50, 30, 2)
    assert np.array_equal(a.history, b.history) and np.array_equal(a.future, b.future)
    assert not np.allclose(make_trajectories(50, seed=8).future, a.future)
    split = make_split(3, n_train=40, n_test=10)
    assert len(split.train) == 40 and len(split.test) == 10
    assert not np.allclose(split.train.history[:10], split.test.history)


def test_agent_centric_last_pose_and_forward_motion() -> None:
    t = make_trajectories(200, seed=1)
    assert np.allclose(t.history[:, -1], 0.0)
    assert (t.history[:, 0, 0] < 0).all()  # the agent came from behind (-x)
    assert (t.future[:, 0, 0] > 0).all()  # and moves on along +x
    assert np.abs(t.history[:, -6, 1]).max() < 1e-9  # heading from the last 5 displacements


def test_the_future_is_multimodal_and_not_in_the_history() -> None:
    t = make_trajectories(3000, seed=2)
    share = np.bincount(t.mode, minlength=len(MODES)) / len(t)
    assert (share > 0.12).all()
    end = t.future[:, -1]
    left, right = end[t.mode == 1, 1].mean(), end[t.mode == 2, 1].mean()
    stop, straight = end[t.mode == 3, 0].mean(), end[t.mode == 0, 0].mean()
    assert left > 4.0 and right < -4.0 and stop < straight - 10.0
    # the mode is independent of the history: the history's speed does not predict it
    speed = np.linalg.norm(t.history[:, -1] - t.history[:, -2], axis=-1)
    means = [speed[t.mode == m].mean() for m in range(len(MODES))]
    assert max(means) - min(means) < 0.05


def test_the_history_carries_the_agents_weave_frequency() -> None:
    t = make_trajectories(400, seed=4, noise=0.0)
    lateral = t.history[:, :, 1] - np.polyval(
        np.polyfit(np.arange(20), t.history[:, :, 1].T, 2), np.arange(20)[:, None]).T
    spec = np.abs(np.fft.rfft(lateral, axis=1))[:, 1:]
    peak_hz = (np.argmax(spec, axis=1) + 1) / (20 * 0.1)
    strong = t.amp > 0.2
    # the detrended lateral spectrum peaks near the weave's frequency (1/(2 s) bins)
    assert np.median(np.abs(peak_hz[strong] - t.freq[strong])) <= 0.5
