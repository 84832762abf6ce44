"""U-Cast (our small reading) and its MAE-only ablation: a tiny 1-D U-Net on the
Lorenz-96 ring, made probabilistic by Monte Carlo dropout.

U-Cast (Rühling Cachay, Watson-Parris and Yu, arXiv:2604.09041, "U-Cast: A Surprisingly
Simple and Efficient Frontier Probabilistic AI Weather Forecaster") trains a standard U-Net
deterministically on MAE, then fine-tunes it briefly on the CRPS of an ensemble whose
members differ only by their dropout masks; at inference every member is one forward pass
with dropout active, rolled out autoregressively. Ours, in torch on the CPU:

* the network: a 1-D U-Net over the ring of variables (circular kernel-3 convolutions),
  two down and two up levels (``c, 2c, 4c`` channels; average-pool down, nearest up, skip
  connections by concatenation), two convolutions with GELU and a dropout layer per
  block, predicting the increment ``x_{t+tau} - y_t``;
* ``u-cast`` (the method): ``pretrain_steps`` Adam steps on the MAE (``lr``), then
  ``finetune_steps`` (a fresh Adam at ``finetune_lr``) on the fair CRPS of
  ``train_members`` dropout members of each training case (the members are the batch
  repeated, so each gets its own masks);
* ``mae-only`` (the baseline: the recipe without its CRPS stage): the same network, seed
  and data, ``pretrain_steps + finetune_steps`` Adam steps on the MAE at ``lr`` (the same
  updates; the CRPS stage does ``train_members`` times the forward passes per update),
  the same dropout ensemble at inference;
* ``persistence`` (a reference): every member is the observed input, at every lead.

Inputs: ``train_inputs`` ``(n, J)`` (noisy observed states), ``train_targets`` ``(n, J)``
(the true state one lead later), ``test_inputs`` ``(n_test, J)``, ``rollout`` (leads),
``members`` (ensemble size at inference). Config: ``channels``, ``dropout``,
``pretrain_steps``, ``finetune_steps``, ``train_members``, ``batch``, ``lr``,
``finetune_lr``. Outputs: ``ensemble`` ``(rollout, members, n_test, J)`` and
``train_crps`` (the fair CRPS of a dropout ensemble on the first training cases after
training: the fit).

torch is imported inside the functions (``harness list`` stays light); each run seeds
torch and numpy from ``seed`` and runs on one thread (restored afterwards), so the same
seed gives the same ensemble.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np
from numpy.typing import NDArray

from harness.plugins.plain_method import plain_method

FAMILY = "probabilistic_forecasting"
DEFAULTS: dict[str, Any] = {"channels": 8, "dropout": 0.1, "pretrain_steps": 600,
                            "finetune_steps": 120, "train_members": 4, "batch": 64,
                            "lr": 3e-3, "finetune_lr": 5e-4}
DIAGNOSTIC_CASES = 256
Array = NDArray[np.float64]


def build_unet(channels: int = 8, dropout: float = 0.1) -> Any:
    """The tiny 1-D U-Net: ``(B, J) -> (B, J)``, ``J`` divisible by 4.

    Features are laid out ``(B, J, C)``; a kernel-3 circular convolution is one linear map
    of each point's ``[left, self, right]`` features (the same operator as ``Conv1d(...,
    padding_mode="circular")``, several times faster on one CPU thread at these sizes)."""
    import torch
    from torch import nn

    class RingConv(nn.Module):
        def __init__(self, c_in: int, c_out: int) -> None:
            super().__init__()
            self.linear = nn.Linear(3 * c_in, c_out)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.linear(torch.cat([x.roll(1, 1), x, x.roll(-1, 1)], dim=-1))

    def block(c_in: int, c_out: int) -> nn.Module:
        return nn.Sequential(RingConv(c_in, c_out), nn.GELU(), RingConv(c_out, c_out),
                             nn.GELU(), nn.Dropout(dropout))

    def down(x: torch.Tensor) -> torch.Tensor:  # average pooling by 2 along the ring
        return x.reshape(x.shape[0], x.shape[1] // 2, 2, x.shape[2]).mean(dim=2)

    def up(x: torch.Tensor) -> torch.Tensor:  # nearest-neighbour upsampling by 2
        return x.repeat_interleave(2, dim=1)

    class UNet1d(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            c = channels
            self.enc0, self.enc1, self.mid = block(1, c), block(c, 2 * c), block(2 * c, 4 * c)
            self.dec1, self.dec0 = block(6 * c, 2 * c), block(3 * c, c)
            self.head = nn.Linear(c, 1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            h = x.unsqueeze(-1)
            e0 = self.enc0(h)
            e1 = self.enc1(down(e0))
            m = self.mid(down(e1))
            d1 = self.dec1(torch.cat([up(m), e1], dim=-1))
            d0 = self.dec0(torch.cat([up(d1), e0], dim=-1))
            return x + self.head(d0).squeeze(-1)  # the increment over the input state

    return UNet1d()


def fair_crps_torch(members: Any, target: Any) -> Any:
    """Mean fair CRPS of ``members (M, ...)`` against ``target (...)`` (differentiable)."""
    m = members.shape[0]
    skill = (members - target.unsqueeze(0)).abs().mean(dim=0)
    pairs = (members.unsqueeze(0) - members.unsqueeze(1)).abs().sum(dim=(0, 1))
    return (skill - pairs / (2.0 * m * (m - 1))).mean()


@contextmanager
def torch_session(seed: int) -> Iterator[Any]:
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    try:
        yield torch
    finally:
        torch.set_num_threads(threads)


def _members(net: Any, x: Any, m: int) -> Any:
    """``m`` dropout members of the net's forecast of ``x (B, J)``: ``(m, B, J)``."""
    out = net(x.repeat(m, 1))
    return out.reshape(m, *x.shape)


def train(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int,
          stages: list[tuple[str, int, float]], net: Any = None) -> tuple[Any, dict[str, float]]:
    """Train a fresh U-Net (or go on training ``net``) through ``stages`` of ``(loss,
    steps, lr)`` (loss ``mae`` or ``crps``, a fresh Adam each); returns the net and the
    mean loss of each stage's last 50 steps."""
    import torch

    cfg = {**DEFAULTS, **config}
    x = torch.as_tensor(np.asarray(inputs["train_inputs"]), dtype=torch.float32)
    y = torch.as_tensor(np.asarray(inputs["train_targets"]), dtype=torch.float32)
    if net is None:
        net = build_unet(int(cfg["channels"]), float(cfg["dropout"]))
    net.train()  # dropout is on throughout: in training and in every ensemble member
    rng = np.random.default_rng(seed)
    batch, k = int(cfg["batch"]), int(cfg["train_members"])
    tail: dict[str, float] = {}
    for loss_name, steps, lr in stages:
        if steps <= 0:
            continue
        opt = torch.optim.Adam(net.parameters(), lr=lr)
        losses = []
        for _ in range(steps):
            idx = torch.as_tensor(rng.integers(0, len(x), size=batch))
            xb, yb = x[idx], y[idx]
            if loss_name == "mae":
                loss = (net(xb) - yb).abs().mean()
            else:
                loss = fair_crps_torch(_members(net, xb, k), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(float(loss.detach()))
        tail[f"{loss_name}_loss"] = float(np.mean(losses[-50:]))
    return net, tail


def train_crps(net: Any, inputs: Mapping[str, Any], members: int) -> float:
    """The fair CRPS of a dropout ensemble on the first training cases (the fit)."""
    import torch

    x = torch.as_tensor(np.asarray(inputs["train_inputs"][:DIAGNOSTIC_CASES]),
                        dtype=torch.float32)
    y = torch.as_tensor(np.asarray(inputs["train_targets"][:DIAGNOSTIC_CASES]),
                        dtype=torch.float32)
    with torch.no_grad():
        return float(fair_crps_torch(_members(net, x, members), y))


def forecast(net: Any, test_inputs: Array, rollout: int, members: int) -> Array:
    """MC-dropout ensemble rolled out autoregressively: ``(rollout, members, n, J)``; each
    member keeps its own trajectory and draws fresh masks at every step."""
    import torch

    x = torch.as_tensor(np.asarray(test_inputs), dtype=torch.float32)
    state = x.repeat(members, 1)
    out = []
    with torch.no_grad():
        for _ in range(rollout):
            state = net(state)
            out.append(state.reshape(members, *x.shape).numpy().astype(float))
    return np.stack(out)


def _run(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int,
         finetune: bool) -> dict[str, Any]:
    cfg = {**DEFAULTS, **config}
    pre, fine = int(cfg["pretrain_steps"]), int(cfg["finetune_steps"])
    stages = ([("mae", pre, float(cfg["lr"])), ("crps", fine, float(cfg["finetune_lr"]))]
              if finetune else [("mae", pre + fine, float(cfg["lr"]))])
    members, rollout = int(inputs["members"]), int(inputs["rollout"])
    with torch_session(seed):
        net, tail = train(inputs, cfg, seed, stages)
        fit = train_crps(net, inputs, members)
        ensemble = forecast(net, inputs["test_inputs"], rollout, members)
    return {"ensemble": ensemble, "train_crps": fit, **tail,
            "updates": float(pre + fine)}


@plain_method("u-cast", family=FAMILY, extra="cpu")
def u_cast(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """U-Cast: a U-Net pre-trained on MAE, fine-tuned on the fair CRPS of MC-dropout members."""
    return _run(inputs, config, seed, finetune=True)


@plain_method("mae-only", family=FAMILY, role="baseline", extra="cpu")
def mae_only(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """The same U-Net trained on MAE only for the same updates; MC-dropout ensemble."""
    return _run(inputs, config, seed, finetune=False)


@plain_method("persistence", family=FAMILY, role="reference")
def persistence(inputs: Mapping[str, Any], config: Mapping[str, Any],
                seed: int) -> dict[str, Any]:
    """Every member is the observed state, at every lead (zero spread)."""
    x = np.asarray(inputs["test_inputs"], dtype=float)
    members, rollout = int(inputs["members"]), int(inputs["rollout"])
    return {"ensemble": np.broadcast_to(x, (rollout, members, *x.shape)).copy()}
