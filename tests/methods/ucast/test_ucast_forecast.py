"""The U-Net, the differentiable fair CRPS, and the training recipes on a tiny problem."""

from __future__ import annotations

import copy
import itertools

import numpy as np
import torch

from methods.ucast.forecast import (
    build_unet,
    fair_crps_torch,
    mae_only,
    persistence,
    torch_session,
    train,
    train_crps,
    u_cast,
)

TINY = {"channels": 4, "batch": 32, "pretrain_steps": 60, "finetune_steps": 20,
        "train_members": 3}


def _inputs(n: int = 256, seed: int = 0) -> dict[str, object]:
    """A smooth ring map with noisy inputs: the target is uncertain given the input."""
    rng = np.random.default_rng(seed)
    state = rng.normal(size=(n + 16, 16))
    target = 0.8 * np.roll(state, 1, axis=1) + 0.2 * state
    noisy = state + 0.5 * rng.normal(size=state.shape)
    return {"train_inputs": noisy[:n], "train_targets": target[:n],
            "test_inputs": noisy[n:], "rollout": 2, "members": 6}


def test_the_unet_is_circular_and_keeps_the_shape() -> None:
    torch.manual_seed(0)
    net = build_unet(4, 0.0).eval()
    x = torch.randn(3, 16)
    with torch.no_grad():
        out = net(x)
        shifted = net(torch.roll(x, 4, dims=1))  # shifts by the pooling factor commute
    assert out.shape == (3, 16)
    assert torch.allclose(torch.roll(out, 4, dims=1), shifted, atol=1e-5)


def test_fair_crps_torch_matches_brute_force() -> None:
    rng = np.random.default_rng(0)
    ens, y = rng.normal(size=(4, 5, 3)), rng.normal(size=(5, 3))
    m = len(ens)
    brute = (np.abs(ens - y).mean(axis=0) - sum(
        np.abs(ens[i] - ens[j]) for i, j in itertools.product(range(m), repeat=2)
    ) / (2 * m * (m - 1))).mean()
    got = fair_crps_torch(torch.as_tensor(ens), torch.as_tensor(y))
    assert abs(float(got) - brute) < 1e-10


def test_crps_fine_tuning_beats_more_mae_from_the_same_pretrained_net() -> None:
    """From the same MAE-pretrained weights, 30 CRPS steps fit the training CRPS of the
    dropout ensemble better than 30 more MAE steps (and better than the start)."""
    inputs = _inputs()
    with torch_session(2):
        pre, _ = train(inputs, TINY, 2, [("mae", 80, 3e-3)])
        mae, _ = train(inputs, TINY, 3, [("mae", 30, 1e-3)], net=copy.deepcopy(pre))
        crps, _ = train(inputs, TINY, 3, [("crps", 30, 1e-3)], net=copy.deepcopy(pre))
        fits = []
        for net in (pre, mae, crps):
            torch.manual_seed(1)
            fits.append(train_crps(net, inputs, 8))
    start, more_mae, fine_tuned = fits
    assert fine_tuned < 0.97 * more_mae and fine_tuned < start, fits


def test_the_same_seed_gives_the_same_ensemble_and_shapes() -> None:
    inputs = _inputs()
    a, b = u_cast(inputs, TINY, 3), u_cast(inputs, TINY, 3)
    assert a["ensemble"].shape == (2, 6, 16, 16)
    assert np.array_equal(a["ensemble"], b["ensemble"])
    assert not np.array_equal(a["ensemble"], u_cast(inputs, TINY, 4)["ensemble"])
    base = mae_only(inputs, TINY, 3)
    assert base["ensemble"].shape == (2, 6, 16, 16) and base["updates"] == a["updates"] == 80
    assert "crps_loss" in a and "crps_loss" not in base
    assert a["ensemble"][:, 0].std() > 0 and np.isfinite(base["train_crps"])


def test_persistence_repeats_the_observation() -> None:
    inputs = _inputs()
    out = persistence(inputs, {}, 0)["ensemble"]
    assert out.shape == (2, 6, 16, 16)
    assert np.array_equal(out[1, 5], np.asarray(inputs["test_inputs"]))
