"""GRU and TF-FACE: seeded, the frequency branch is live, the losses do what they say, and
both learn to beat constant velocity on a tiny problem."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from methods.tfface.nets import (  # noqa: E402
    GRUPredictor,
    TFFacePredictor,
    band_edges,
    count_parameters,
)
from methods.tfface.predict import (  # noqa: E402
    band_consistency,
    constant_velocity,
    features,
    gru,
    tf_face,
    wta_loss,
)


def _problem(n_train: int, n_test: int, seed: int = 0) -> tuple[dict, np.ndarray]:  # type: ignore[type-arg]
    # a small stand-in for the environment (methods may not import it): straight or turning
    # agents with a weave, agent-centric
    rng = np.random.default_rng(seed)
    n = n_train + n_test
    t = np.arange(50) * 0.1
    v = rng.uniform(6, 10, n)[:, None]
    turn = rng.choice([-1.0, 0.0, 1.0], n)[:, None]
    w = np.where(t[None, :] > 2.0, turn * 0.5, 0.0)
    yaw = np.cumsum(w * 0.1, axis=1)
    xy = np.cumsum(np.stack([v * np.cos(yaw), v * np.sin(yaw)], -1) * 0.1, axis=1)
    xy[..., 1] += 0.2 * np.sin(2 * np.pi * rng.uniform(0.5, 1.5, n)[:, None] * t)
    xy -= xy[:, 19:20]
    inputs = {"train_history": xy[:n_train, :20], "train_future": xy[:n_train, 20:],
              "test_history": xy[n_train:, :20], "n_fut": 30}
    return inputs, xy[n_train:, 20:]


def _min_ade(out: dict, true: np.ndarray) -> float:  # type: ignore[type-arg]
    err = np.linalg.norm(out["trajectories"] - true[:, None], axis=-1)
    return float(err.mean(-1).min(1).mean())


def test_band_edges_cover_the_spectrum_in_order() -> None:
    assert band_edges(10, 4) == [(0, 1), (1, 3), (3, 5), (5, 10)]
    assert band_edges(16, 4) == [(0, 1), (1, 3), (3, 9), (9, 16)]
    for bins, bands in [(16, 4), (11, 3), (5, 5), (7, 1)]:
        edges = band_edges(bins, bands)
        assert len(edges) == bands and edges[0][0] == 0 and edges[-1][1] == bins
        assert all(a[1] == b[0] and a[0] < a[1] for a, b in zip(edges, edges[1:], strict=False))


def test_same_seed_same_outputs_and_another_seed_differs() -> None:
    inputs, _ = _problem(64, 8)
    cfg = {"steps": 5, "batch": 16}
    for fn in (gru, tf_face):
        a, b, c = fn(inputs, cfg, 3), fn(inputs, cfg, 3), fn(inputs, cfg, 4)
        assert a["trajectories"].shape == (8, 6, 30, 2) and a["probs"].shape == (8, 6)
        assert np.allclose(a["probs"].sum(1), 1.0)
        assert np.array_equal(a["trajectories"], b["trajectories"])
        assert not np.allclose(a["trajectories"], c["trajectories"])


def test_parameter_counts_are_matched_within_five_percent() -> None:
    g, f = count_parameters(GRUPredictor(30)), count_parameters(TFFacePredictor(20, 30))
    assert abs(g - f) / f < 0.05


def test_the_frequency_branch_sees_high_frequencies_and_its_gates_learn() -> None:
    torch.manual_seed(0)
    inputs, _ = _problem(16, 0)
    feats, disp = (torch.tensor(a, dtype=torch.float32)
                   for a in features(inputs["train_history"]))
    wobble = 0.05 * torch.tensor(np.cos(np.pi * np.arange(19)), dtype=torch.float32)
    shaken = disp.clone()
    shaken[..., 1] += wobble  # a fast wobble: the high bins of the branch's input
    on, off = TFFacePredictor(20, 30), TFFacePredictor(20, 30, frequency=False)
    with torch.no_grad():
        assert not torch.allclose(on.encode(feats, disp), on.encode(feats, shaken))
        assert torch.allclose(off.encode(feats, disp), off.encode(feats, shaken))
    traj, logits, coarse = on(feats, disp)
    (traj.square().mean() + logits.square().mean()).backward()
    assert on.freq.gate.weight.grad is not None and on.freq.gate.weight.grad.abs().sum() > 0
    assert on.freq.gate.bias.grad is not None and on.freq.gate.bias.grad.abs().sum() > 0
    assert all(e.weight.grad is not None for e in on.freq.embed)


def test_band_consistency_is_zero_on_the_truth_and_band_specific() -> None:
    true = torch.cumsum(torch.ones(4, 30, 2), dim=1)
    bands = band_edges(16, 4)
    assert float(band_consistency(true, true, bands)) == pytest.approx(0.0, abs=1e-6)
    wiggle = true.clone()
    wiggle[..., 1] += 0.3 * torch.cos(torch.pi * torch.arange(30)).cumsum(0)  # top bin only
    assert float(band_consistency(wiggle, true, bands)) > 0
    assert float(band_consistency(wiggle, true, bands[:2])) == pytest.approx(0.0, abs=1e-5)


def test_relaxed_wta_picks_the_closest_mode() -> None:
    true = torch.zeros(2, 5, 2)
    pred = torch.stack([torch.full((2, 5, 2), 3.0), torch.full((2, 5, 2), 0.5)], dim=1)
    loss, best = wta_loss(pred, true, relax=0.0)
    assert best.tolist() == [1, 1]
    assert float(loss) == pytest.approx(0.125)  # smooth L1 of 0.5
    relaxed, _ = wta_loss(pred, true, relax=0.5)
    assert float(relaxed) > float(loss)


@pytest.mark.slow
def test_trained_predictors_beat_constant_velocity() -> None:
    inputs, true = _problem(300, 60, seed=1)
    cv = _min_ade(constant_velocity(inputs, {}, 0), true)
    for fn in (gru, tf_face):
        out = fn(inputs, {"steps": 150, "batch": 64}, 0)
        assert _min_ade(out, true) < 0.6 * cv, fn.__name__
