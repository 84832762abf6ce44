"""The torch networks behind :mod:`methods.tfface.predict` (imported only when a method runs,
so that registering the methods does not import torch).

* :class:`GRUPredictor` (the baseline): a GRU over the history's per-step features, its last
  state decoded by an MLP into ``k`` future trajectories and ``k`` mode logits;
* :class:`TFFacePredictor` (our small reading of TF-FACE): the same GRU, fused with a gated
  frequency-domain attention branch over band tokens of the history's spectrum
  (:class:`GatedFrequencyAttention`), then a dual-stage decoder (coarse proposals, then a
  per-mode refinement).

Both take features ``(batch, n_hist, 4)``: positions / 10 and per-step displacements, and
the raw displacements ``(batch, n_hist - 1, 2)`` (the frequency branch's input). They return
``(trajectories (batch, k, n_fut, 2) in units of 10 m, logits (batch, k), coarse or None)``.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


def band_edges(n_bins: int, n_bands: int) -> list[tuple[int, int]]:
    """Contiguous bands of rFFT bins, widening with frequency: the DC bin alone, then the
    rest shared out 1 : 2 : 3 ... and rounded (Python's rounding): ``[0,1), [1,3), [3,5),
    [5,10)`` for 10 bins and 4 bands, ``[0,1), [1,3), [3,9), [9,16)`` for 16."""
    if n_bands < 1 or n_bands > n_bins:
        raise ValueError(f"need 1 <= bands <= {n_bins}, got {n_bands}")
    if n_bands == 1:
        return [(0, n_bins)]
    edges = [0, 1]
    rest = n_bins - 1
    widths = [float(w) for w in range(1, n_bands)]
    total = sum(widths)
    cuts = [round(rest * sum(widths[: i + 1]) / total) for i in range(n_bands - 1)]
    edges += [1 + c for c in cuts]
    for i in range(1, len(edges)):  # every band keeps at least one bin
        edges[i] = max(edges[i], edges[i - 1] + 1)
    edges[-1] = n_bins
    return list(zip(edges[:-1], edges[1:], strict=True))


def spectrum(x: Tensor) -> Tensor:
    """Orthonormal rFFT along time of ``(batch, steps, 2)``: ``(batch, bins, 4)`` as the real
    and imaginary parts of both coordinates."""
    z = torch.fft.rfft(x, dim=1, norm="ortho")
    return torch.cat([z.real, z.imag], dim=-1)


class GatedFrequencyAttention(nn.Module):
    """Band tokens of the history's spectrum, gated per band, attended by the GRU state.

    The displacement spectrum is cut into ``n_bands`` bands; each band's bins go through its
    own linear map to a token (band-specific features). A learnable gate per band, ``sigmoid
    (bias_b + w_b . h)`` (a prior per band, adapted to the agent by the GRU state ``h``),
    scales each token; one self-attention layer mixes the gated band tokens and the GRU
    state queries them (cross-attention). Returns the attended vector and the gates.
    """

    def __init__(self, n_steps: int, hidden: int, n_bands: int = 4, d: int = 32,
                 heads: int = 2) -> None:
        super().__init__()
        n_bins = n_steps // 2 + 1
        self.bands = band_edges(n_bins, n_bands)
        self.embed = nn.ModuleList([nn.Linear(4 * (hi - lo), d) for lo, hi in self.bands])
        self.band_pos = nn.Parameter(torch.zeros(n_bands, d))
        self.gate = nn.Linear(hidden, n_bands)
        nn.init.zeros_(self.gate.weight)
        nn.init.constant_(self.gate.bias, 1.0)
        self.mix = nn.MultiheadAttention(d, heads, batch_first=True)
        self.norm = nn.LayerNorm(d)
        self.query = nn.Linear(hidden, d)
        self.pool = nn.MultiheadAttention(d, heads, batch_first=True)

    def forward(self, disp: Tensor, h: Tensor) -> tuple[Tensor, Tensor]:
        spec = spectrum(disp)
        tokens = torch.stack([emb(spec[:, lo:hi].flatten(1))
                              for emb, (lo, hi) in zip(self.embed, self.bands, strict=True)],
                             dim=1) + self.band_pos
        gates = torch.sigmoid(self.gate(h))
        tokens = tokens * gates.unsqueeze(-1)
        mixed, _ = self.mix(tokens, tokens, tokens, need_weights=False)
        tokens = self.norm(tokens + mixed)
        pooled, _ = self.pool(self.query(h).unsqueeze(1), tokens, tokens, need_weights=False)
        return pooled.squeeze(1), gates


def _mlp(d_in: int, hidden: int, d_out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                         nn.ReLU(), nn.Linear(hidden, d_out))


class GRUPredictor(nn.Module):
    """GRU encoder + MLP decoder of ``k`` modes (the time-domain baseline)."""

    def __init__(self, n_fut: int, k: int = 6, hidden: int = 64, decoder: int = 188) -> None:
        super().__init__()
        self.n_fut, self.k = n_fut, k
        self.gru = nn.GRU(4, hidden, batch_first=True)
        self.head = _mlp(hidden, decoder, k * n_fut * 2 + k)

    def encode(self, feats: Tensor) -> Tensor:
        _, h = self.gru(feats)
        return h[-1]

    def forward(self, feats: Tensor, disp: Tensor) -> tuple[Tensor, Tensor, Tensor | None]:
        out = self.head(self.encode(feats))
        traj = out[:, : self.k * self.n_fut * 2].view(-1, self.k, self.n_fut, 2)
        return traj, out[:, self.k * self.n_fut * 2:], None


class TFFacePredictor(nn.Module):
    """GRU + gated frequency-domain attention (fused), and a dual-stage decoder.

    Stage 1 decodes the fused state into ``k`` coarse proposals; stage 2 refines each: the
    proposal (flattened, embedded) with its mode's embedding and the fused state go through
    an MLP that emits a residual trajectory and the mode's logit.
    """

    def __init__(self, n_hist: int, n_fut: int, k: int = 6, hidden: int = 64,
                 decoder: int = 128, n_bands: int = 4, d: int = 32,
                 frequency: bool = True) -> None:
        super().__init__()
        self.n_fut, self.k, self.frequency = n_fut, k, frequency
        self.gru = nn.GRU(4, hidden, batch_first=True)
        self.freq = GatedFrequencyAttention(n_hist - 1, hidden, n_bands=n_bands, d=d)
        self.fuse = nn.Sequential(nn.Linear(hidden + d, hidden), nn.ReLU())
        self.fuse_norm = nn.LayerNorm(hidden)
        self.coarse = _mlp(hidden, decoder, k * n_fut * 2)
        self.proposal = nn.Linear(n_fut * 2, d)
        self.mode = nn.Parameter(torch.randn(k, d) * 0.1)
        self.refine = nn.Sequential(nn.Linear(hidden + 2 * d, decoder), nn.ReLU(),
                                    nn.Linear(decoder, n_fut * 2 + 1))
        self.last_gates: Tensor | None = None

    def encode(self, feats: Tensor, disp: Tensor) -> Tensor:
        _, h = self.gru(feats)
        h = h[-1]
        pooled, gates = self.freq(disp, h)
        if not self.frequency:  # the branch switched off (a diagnostic, not a method)
            pooled = torch.zeros_like(pooled)
        self.last_gates = gates
        return self.fuse_norm(h + self.fuse(torch.cat([h, pooled], dim=-1)))

    def forward(self, feats: Tensor, disp: Tensor) -> tuple[Tensor, Tensor, Tensor | None]:
        z = self.encode(feats, disp)
        coarse = self.coarse(z).view(-1, self.k, self.n_fut, 2)
        prop = self.proposal(coarse.detach().flatten(2))
        ctx = torch.cat([z.unsqueeze(1).expand(-1, self.k, -1), prop,
                         self.mode.unsqueeze(0).expand(z.shape[0], -1, -1)], dim=-1)
        out = self.refine(ctx)
        refined = coarse + out[..., :-1].view(-1, self.k, self.n_fut, 2)
        return refined, out[..., -1], coarse


def count_parameters(model: nn.Module) -> int:
    return int(sum(p.numel() for p in model.parameters() if p.requires_grad))
