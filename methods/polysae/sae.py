"""PolySAE (our reading) against a TopK sparse autoencoder with the same encoder, trained on
the same activations at the same dictionary size and L0.

PolySAE (ICML 2026, "Polynomial sparse autoencoders"): keep the SAE's linear encoder, give
the decoder higher-order terms so that two features can *compose* instead of a third,
monolithic feature standing for the pair. The interactions are low-rank through one shared
projection ``P`` (``m`` latents to ``r`` dims)::

    z     = TopK_k(ReLU(W_enc (x - b_dec) + b_enc))           (both methods)
    x_hat = W_dec z + b_dec                                     (topk-sae)
          + C2 (P z)^2 + C3 (P z)^3                             (polysae; powers elementwise)

so the pairwise term of features i and j is ``2 z_i z_j C2 (P_i * P_j)``; its norm is the
pair's *interaction weight* (returned for every pair, to correlate with co-occurrence).
The extra parameters are ``P`` (m r) and ``C2, C3`` (2 r d): with m = 1024, d = 576,
r = 32 that is 5.9% of the TopK SAE's 1.18M (the paper: 3% on GPT-2 at its sizes).

Training (both): Adam, MSE, decoder atoms renormalised to unit norm after each step, the
decoder bias started at the data mean, the encoder at the decoder's transpose, gradient
norm clipped at 1; ``C2, C3`` start at zero, so PolySAE starts as the TopK SAE, and ``P``
is kept with orthonormal columns (a QR retraction after every step, as in the authors'
code), which bounds ``|P z|`` by ``|z|``: without it the cubic term of a held-out token
with a larger code than any training token blew the test error up by four orders. Seeded
(torch generator and batch order); one CPU thread unless ``threads`` says otherwise.

Inputs: ``train`` and ``test`` (``[n, d]`` float32), ``probes`` (a list of ``[t, d]``
arrays, one per sentence). Config: ``m``, ``k``, ``rank``, ``steps``, ``batch``, ``lr``,
``threads``. Outputs: ``recon`` (test reconstructions), ``test_idx`` / ``test_val`` (the
test codes, top-k form), ``probe_codes`` (per sentence, the max over its tokens of each
code), ``n_params``, ``dead_frac``, ``interaction`` (``[m, m]``, PolySAE only).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.plugins.plain_method import plain_method

FAMILY = "sae_activations"
DEFAULTS: dict[str, Any] = {"m": 1024, "k": 32, "rank": 32, "steps": 1200, "batch": 256,
                            "lr": 1e-3, "threads": 1,
                            "poly_lr_mult": 10.0}


def _orthonormal(p: Any) -> Any:
    """The nearest-by-QR matrix with orthonormal columns (signs fixed by R's diagonal, so
    the retraction moves ``p`` continuously from step to step)."""
    import torch

    q, r = torch.linalg.qr(p)
    sign = torch.sign(torch.diagonal(r))
    sign[sign == 0] = 1
    return q * sign


def _build(d: int, m: int, rank: int, order: int, x_mean: np.ndarray, seed: int) -> Any:
    import torch
    from torch import nn

    gen = torch.Generator().manual_seed(seed)

    class SAE(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            w = torch.randn(m, d, generator=gen)
            w = w / w.norm(dim=1, keepdim=True)
            self.w_dec = nn.Parameter(w.clone())
            self.w_enc = nn.Parameter(w.clone())
            self.b_enc = nn.Parameter(torch.zeros(m))
            self.b_dec = nn.Parameter(torch.as_tensor(x_mean, dtype=torch.float32).clone())
            self.order = order
            if order > 1:
                self.proj = nn.Parameter(_orthonormal(torch.randn(m, rank, generator=gen)))
                self.c2 = nn.Parameter(torch.zeros(rank, d))
                self.c3 = nn.Parameter(torch.zeros(rank, d))
                # orthonormal columns keep r of m directions: sqrt(m / r) gives P z the
                # norm of an isotropic z, so C2, C3 need no large weights to matter
                self.gain = (m / rank) ** 0.5

        def encode(self, x: Any, k: int) -> Any:
            pre = torch.relu((x - self.b_dec) @ self.w_enc.T + self.b_enc)
            top = pre.topk(k, dim=-1)
            return torch.zeros_like(pre).scatter(-1, top.indices, top.values)

        def decode(self, z: Any) -> Any:
            out = z @ self.w_dec + self.b_dec
            if self.order > 1:
                y = (z @ self.proj) * self.gain
                out = out + (y * y) @ self.c2 + (y * y * y) @ self.c3
            return out

    return SAE()


def interaction_weights(proj: np.ndarray, c2: np.ndarray) -> np.ndarray:
    """``W[i, j] = |C2 (P_i * P_j)|``, the norm of the pairwise decoder direction of
    features i and j, for all pairs at once: ``sum_rs P_ir P_is G_rs P_jr P_js`` with
    ``G = C2 C2^T`` (so no ``[m, m, d]`` tensor is built)."""
    p = np.asarray(proj, dtype=np.float64)
    g = np.asarray(c2, dtype=np.float64) @ np.asarray(c2, dtype=np.float64).T
    outer = np.einsum("ir,is->irs", p, p).reshape(len(p), -1)
    sq = (outer * g.reshape(1, -1)) @ outer.T
    return np.sqrt(np.maximum(sq, 0.0)).astype(np.float32)


def train_sae(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int,
              order: int) -> dict[str, Any]:
    """Train one SAE (``order`` 1: TopK, 3: PolySAE) and return its outputs (see module)."""
    import torch

    cfg = {**DEFAULTS, **config}
    m, k, steps, batch = int(cfg["m"]), int(cfg["k"]), int(cfg["steps"]), int(cfg["batch"])
    threads = torch.get_num_threads()
    torch.set_num_threads(int(cfg["threads"]))
    try:
        train = torch.as_tensor(np.asarray(inputs["train"], dtype=np.float32))
        d = train.shape[1]
        model = _build(d, m, int(cfg["rank"]), order, train.mean(0).numpy(), seed)
        lr = float(cfg["lr"])
        poly = [p for n, p in model.named_parameters() if n in ("c2", "c3")]
        rest = [p for n, p in model.named_parameters() if n not in ("c2", "c3")]
        groups = [{"params": rest, "lr": lr}]
        if poly:  # the interaction maps start at zero: a larger step lets them matter
            groups.append({"params": poly, "lr": lr * float(cfg["poly_lr_mult"])})
        opt = torch.optim.Adam(groups)
        rng = np.random.default_rng(seed)
        fired = torch.zeros(m, dtype=torch.bool)
        order_ = rng.permutation(len(train))
        pos = 0
        for _ in range(steps):
            if pos + batch > len(order_):
                order_, pos = rng.permutation(len(train)), 0
            xb = train[order_[pos:pos + batch]]
            pos += batch
            z = model.encode(xb, k)
            loss = ((model.decode(z) - xb) ** 2).sum(-1).mean()
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            with torch.no_grad():
                model.w_dec /= model.w_dec.norm(dim=1, keepdim=True).clamp_min(1e-8)
                if order > 1:  # retract P to orthonormal columns, as the paper's code does
                    model.proj.copy_(_orthonormal(model.proj))
                fired |= (z > 0).any(0)
        with torch.no_grad():
            test = torch.as_tensor(np.asarray(inputs["test"], dtype=np.float32))
            zt = model.encode(test, k)
            recon = model.decode(zt)
            top = zt.topk(k, dim=-1)
            probe_codes = np.stack([
                model.encode(torch.as_tensor(np.asarray(p, dtype=np.float32)), k)
                .max(0).values.numpy() for p in inputs.get("probes", [])
            ]) if inputs.get("probes") else np.zeros((0, m), np.float32)
            out: dict[str, Any] = {
                "recon": recon.numpy(), "test_idx": top.indices.numpy().astype(np.int32),
                "test_val": top.values.numpy(), "probe_codes": probe_codes,
                "n_params": int(sum(p.numel() for p in model.parameters())),
                "dead_frac": float(1.0 - fired.float().mean()), "m": m, "k": k,
            }
            if order > 1:
                out["interaction"] = interaction_weights(model.proj.numpy(), model.c2.numpy())
        return out
    finally:
        torch.set_num_threads(threads)


@plain_method("polysae", family=FAMILY, extra="cpu",
              summary="PolySAE: TopK encoder, decoder with low-rank pairwise + triple terms")
def polysae(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """PolySAE: the TopK encoder with a polynomial (order 3, low-rank) decoder."""
    return train_sae(inputs, config, seed, order=3)


@plain_method("topk-sae", family=FAMILY, extra="cpu", role="baseline",
              summary="TopK sparse autoencoder (linear decoder), same encoder, m and L0")
def topk_sae(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """The TopK SAE: the same encoder, a linear decoder."""
    return train_sae(inputs, config, seed, order=1)
