"""GRU and TF-FACE (our small reading): multimodal trajectory prediction, k = 6 modes.

TF-FACE ("time-frequency learning via frequency-domain adaptive and controllable
enhancement", ICML 2026) fuses a time-domain encoder with learnable gated frequency-domain
attention over band-specific features, decodes in two stages and trains with a band-specific
time-frequency dual-consistency loss. Ours, in torch on CPU (:mod:`methods.tfface.nets`):

* ``gru`` (the baseline): a GRU over the history (positions / 10 and per-step
  displacements), an MLP decoder of 6 future trajectories and 6 mode logits; trained by
  winner-takes-all (smooth L1 on the mode closest to the truth in ADE) plus cross-entropy
  of the mode logits against that mode;
* ``tf-face``: the same GRU fused with a gated frequency attention branch (the orthonormal
  rFFT of the history's displacements, cut into 4 bands, one linear map per band to a
  token, a sigmoid gate per band conditioned on the GRU state, self-attention over the band
  tokens and the GRU state's cross-attention read-out), a dual-stage decoder (6 coarse
  proposals, then a per-mode refinement with its logit), and the loss: WTA + cross-entropy
  on the refined modes, WTA on the coarse ones, and the *dual-consistency* term
  ``consistency x`` the per-band mean absolute error between the rFFT of the winning mode's
  future displacements and the truth's (all bands for the refined trajectory, the two
  lowest bands, the long-term trend, for the coarse one). ``-T consistency=0`` keeps the
  gates and the dual-stage decoder without the loss (an ablation).

Both are trained with the same budget: Adam, ``steps`` steps of ``batch`` trajectories drawn
with a generator seeded from ``seed``, gradients clipped at 1, one CPU thread (so that a
seed gives the same numbers). No map, no neighbours, no ensembling: a single agent.

Inputs: ``train_history`` (n, n_hist, 2), ``train_future`` (n, n_fut, 2), ``test_history``,
agent-centric metres. Config: ``steps``, ``batch``, ``lr``, ``k``, ``hidden``,
``consistency``, ``bands``. Outputs: ``trajectories`` (n_test, k, n_fut, 2) in metres,
``probs`` (n_test, k), ``params``, ``train_loss``.

``constant-velocity`` (a reference floor): the mean of the last three observed
displacements, extrapolated; one mode (repeated ``k`` times, all probability on the first).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from harness.plugins.plain_method import plain_method

if TYPE_CHECKING:
    from torch import Tensor, nn

FAMILY = "trajectory_prediction"
SCALE = 10.0  # metres per model unit
Array = NDArray[np.float64]


def features(history: Array) -> tuple[Array, Array]:
    """Per-step features ``(n, n_hist, 4)`` (positions / 10, displacements with a leading
    zero) and the displacements ``(n, n_hist - 1, 2)`` in metres."""
    disp = np.diff(history, axis=1)
    padded = np.concatenate([np.zeros_like(history[:, :1]), disp], axis=1)
    return np.concatenate([history / SCALE, padded], axis=-1), disp


def wta_index(pred: Tensor, true: Tensor) -> Tensor:
    """The mode with the lowest ADE per agent: ``pred`` (b, k, t, 2), ``true`` (b, t, 2)."""
    return (pred - true.unsqueeze(1)).norm(dim=-1).mean(-1).argmin(dim=1)


def band_consistency(pred: Tensor, true: Tensor, bands: list[tuple[int, int]]) -> Tensor:
    """Mean over bands of the mean absolute error between the rFFT (orthonormal) of the
    predicted and the true future displacements (the origin counts as the first point)."""
    from methods.tfface.nets import spectrum

    def disp(x: Tensor) -> Tensor:
        return x.diff(dim=1, prepend=x.new_zeros(x.shape[0], 1, 2))

    err = (spectrum(disp(pred)) - spectrum(disp(true))).abs()
    return sum((err[:, lo:hi].mean() for lo, hi in bands), pred.new_zeros(())) / len(bands)


def _pick(x: Tensor, idx: Tensor) -> Tensor:
    return x[range(len(idx)), idx]


def wta_loss(pred: Tensor, true: Tensor, relax: float) -> tuple[Tensor, Tensor]:
    """Relaxed winner-takes-all (Rupprecht et al., 2017): smooth L1 of the best mode (by ADE)
    weighted ``1 - relax``, every mode's ``relax / k``; the best mode's index."""
    import torch.nn.functional as F

    best = wta_index(pred.detach(), true)
    per_mode = F.smooth_l1_loss(pred, true.unsqueeze(1).expand_as(pred),
                                reduction="none").mean(dim=(-1, -2))
    loss = (1 - relax) * _pick(per_mode, best).mean() + relax * per_mode.mean()
    return loss, best


def _loss(model: nn.Module, feats: Tensor, disp: Tensor, fut: Tensor, consistency: float,
          bands: list[tuple[int, int]], relax: float) -> Tensor:
    import torch.nn.functional as F

    traj, logits, coarse = model(feats, disp)
    traj, fut = traj * SCALE, fut * SCALE  # the regression terms in metres
    loss, best = wta_loss(traj, fut, relax)
    loss = loss + F.cross_entropy(logits, best)
    if coarse is not None:
        coarse = coarse * SCALE
        coarse_loss, best_c = wta_loss(coarse, fut, relax)
        loss = loss + coarse_loss
        if consistency > 0:
            loss = loss + consistency * (band_consistency(_pick(traj, best), fut, bands)
                                         + band_consistency(_pick(coarse, best_c), fut,
                                                            bands[:2]))
    return loss


def _train_and_predict(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int,
                       kind: str) -> dict[str, Any]:
    import torch

    from methods.tfface.nets import GRUPredictor, TFFacePredictor, band_edges, count_parameters

    hist = np.asarray(inputs["train_history"], dtype=float)
    fut = np.asarray(inputs["train_future"], dtype=float)
    test = np.asarray(inputs["test_history"], dtype=float)
    n_hist, n_fut = hist.shape[1], fut.shape[1]
    steps, batch = int(config.get("steps", 500)), int(config.get("batch", 128))
    lr, k = float(config.get("lr", 2e-3)), int(config.get("k", 6))
    hidden, consistency = int(config.get("hidden", 64)), float(config.get("consistency", 1.0))
    n_bands, relax = int(config.get("bands", 4)), float(config.get("wta_relax", 0.05))

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        torch.manual_seed(seed)
        model: nn.Module
        if kind == "gru":
            model = GRUPredictor(n_fut, k=k, hidden=hidden,
                                 decoder=int(config.get("decoder", 188)))
        else:
            model = TFFacePredictor(n_hist, n_fut, k=k, hidden=hidden,
                                    decoder=int(config.get("decoder", 128)), n_bands=n_bands,
                                    frequency=bool(config.get("frequency", True)))
        bands = band_edges(n_fut // 2 + 1, n_bands)
        f_np, d_np = features(hist)
        feats = torch.tensor(f_np, dtype=torch.float32)
        disp = torch.tensor(d_np, dtype=torch.float32)
        target = torch.tensor(fut / SCALE, dtype=torch.float32)
        opt = torch.optim.Adam(model.parameters(), lr=lr)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(steps, 1))
        gen = torch.Generator().manual_seed(seed)
        losses = []
        model.train()
        for _ in range(steps):
            idx = torch.randint(0, len(feats), (min(batch, len(feats)),), generator=gen)
            loss = _loss(model, feats[idx], disp[idx], target[idx], consistency, bands,
                         relax)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            losses.append(float(loss.detach()))
        model.eval()
        tf_np, td_np = features(test)
        with torch.no_grad():
            traj, logits, _ = model(torch.tensor(tf_np, dtype=torch.float32),
                                    torch.tensor(td_np, dtype=torch.float32))
        tail = losses[-max(len(losses) // 10, 1):] if losses else [float("nan")]
        return {"trajectories": traj.double().numpy() * SCALE,
                "probs": torch.softmax(logits, dim=-1).double().numpy(),
                "params": count_parameters(model), "train_loss": float(np.mean(tail))}
    finally:
        torch.set_num_threads(threads)


@plain_method("gru", family=FAMILY, role="baseline", extra="cpu")
def gru(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """GRU encoder + MLP decoder of 6 modes, winner-takes-all (the time-domain baseline)."""
    return _train_and_predict(inputs, config, seed, "gru")


@plain_method("tf-face", family=FAMILY, role="method", extra="cpu")
def tf_face(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """GRU fused with gated frequency-band attention, dual-stage decoder, dual-consistency
    loss (TF-FACE, our small reading)."""
    return _train_and_predict(inputs, config, seed, "tf-face")


@plain_method("constant-velocity", family=FAMILY, role="reference")
def constant_velocity(inputs: Mapping[str, Any], config: Mapping[str, Any],
                      seed: int) -> dict[str, Any]:
    """The last observed velocity (mean of three displacements), extrapolated: a floor."""
    test = np.asarray(inputs["test_history"], dtype=float)
    n_fut, k = int(inputs["n_fut"]), int(config.get("k", 6))
    v = (test[:, -1] - test[:, -4]) / 3.0
    path = v[:, None, :] * np.arange(1, n_fut + 1)[None, :, None]
    probs = np.zeros((len(test), k))
    probs[:, 0] = 1.0
    return {"trajectories": np.repeat(path[:, None], k, axis=1), "probs": probs, "params": 0,
            "train_loss": float("nan")}
