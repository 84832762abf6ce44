"""MEMIT: many edits in one least-squares update spread over several MLP layers
(Meng et al., ICLR 2023).

For a batch of edits, MEMIT first finds, per edit, the residual-stream vector ``z_i`` the
*last* layer of its range should emit at the edit position for the model to say the target
(as ROME's ``v``). It then walks the layers from the bottom: at layer ``l`` it reads the
keys ``K`` of all edits (inputs of ``down_proj``, under the already-updated lower layers)
and the gap ``R = (z − h) / (layers left)`` between the wanted and the current top-layer
output, and writes one update for the whole batch::

    ΔW_l = R Kᵀ (λ C_l + K Kᵀ)⁻¹

the minimiser of ``‖ΔW K − R‖² + λ·tr(ΔW C ΔWᵀ)``: the edits' keys move toward their
targets while the keys the corpus covariance ``C_l`` describes stay put. One ``apply`` call
is one such update (``updates`` counts them; ``ΔW_l`` has rank ≤ the batch size); sequential
editing calls ``apply`` once per edit.

Deviations as in :mod:`.rome` (last prompt token, no prefixes, small corpus with a ridge).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from harness.plugins.editor import Edit, Editor, EditTriple, editor
from methods.editors.parametric.base import (
    WeightEditor,
    corpus_texts,
    down_proj,
    keys_at,
    optimise_mlp_delta,
    residual_at,
    resolve_layer,
)
from methods.editors.parametric.covariance import DEFAULT_RIDGE, regularised, second_moments
from methods.editors.parametric.rome import (
    STOP_NLL,
    V_CLAMP,
    V_LR,
    V_STEPS,
    V_WEIGHT_DECAY,
    default_layer,
)

DEFAULT_SPAN = 5  # layers in the critical range, centred on ROME's layer
DEFAULT_LAMBDA = 1.0  # weight of C against the edits' own K Kᵀ (per key: C is a mean)


def default_layers(model: Any) -> list[int]:
    """``DEFAULT_SPAN`` consecutive layers centred on ROME's default layer (fewer when the
    model is shallower)."""
    depth = int(model.config.num_hidden_layers)
    span = min(DEFAULT_SPAN, depth)
    low = min(max(0, default_layer(model) - span // 2), depth - span)
    return list(range(low, low + span))


def batch_update(keys: torch.Tensor, residual: torch.Tensor, moment: torch.Tensor,
                 weight: float) -> torch.Tensor:
    """``R Kᵀ (λ C + K Kᵀ)⁻¹`` for keys ``K`` ``[d_ff, n]`` and residuals ``R``
    ``[d_model, n]`` (float64)."""
    system = weight * moment + keys @ keys.T
    adjusted = torch.linalg.solve(system, keys)  # [d_ff, n]
    return residual @ adjusted.T


@editor("memit", whitebox=True, extra="cpu",
        summary="MEMIT: one least-squares update of several MLP layers per batch of edits (HF)")
class MEMITEditor(WeightEditor):
    """Joint update of ``layers``' ``down_proj`` weights per ``apply`` call."""

    name = "memit"

    def __init__(self, model: Any, tokenizer: Any, corpus: Sequence[str], *,
                 layers: Sequence[int] | None = None, ridge: float = DEFAULT_RIDGE,
                 weight: float = DEFAULT_LAMBDA, steps: int = V_STEPS, lr: float = V_LR) -> None:
        chosen = default_layers(model) if layers is None else [resolve_layer(model, i)
                                                                for i in layers]
        if not chosen or sorted(set(chosen)) != chosen:
            raise ValueError(f"MEMIT layers must be distinct and ascending, got {chosen}")
        self.layers = chosen
        super().__init__(model, tokenizer, [down_proj(model, i).weight for i in chosen])
        moments = second_moments(model, tokenizer, chosen, corpus)
        self.moments = {i: regularised(moments[i], ridge) for i in chosen}
        self.weight, self.steps, self.lr = weight, steps, lr
        self.last_deltas: dict[int, torch.Tensor] = {}
        """The update each layer received in the last ``apply`` call (for inspection)."""

    @classmethod
    def build(cls, *, model: Any = None, tokenizer: Any = None,
              train: Sequence[EditTriple] | None = None) -> Editor:
        """MEMIT on ``model`` with ``C_l`` from the train triples' prompts."""
        if model is None or tokenizer is None:
            raise ValueError("memit is white-box: pass the HF model and tokenizer")
        return cls(model, tokenizer, corpus_texts(train))

    def _added(self, edits: list[Edit]) -> None:
        if not edits:
            return
        batch = self.batch(edits)
        top = self.layers[-1]
        delta = optimise_mlp_delta(self.model, top, batch, steps=self.steps, lr=self.lr,
                                   clamp=V_CLAMP, weight_decay=V_WEIGHT_DECAY,
                                   stop_nll=STOP_NLL)
        targets = (residual_at(self.model, top, batch) + delta).double().T  # [d_model, n]
        self.last_deltas = {}
        for i, layer in enumerate(self.layers):
            keys = keys_at(self.model, [layer], batch)[layer].double().T  # [d_ff, n]
            current = residual_at(self.model, top, batch).double().T
            residual = (targets - current) / (len(self.layers) - i)
            update = batch_update(keys, residual, self.moments[layer].to(keys.device),
                                  self.weight)
            w = down_proj(self.model, layer).weight
            with torch.no_grad():
                w.add_(update.to(w.dtype))
            self.last_deltas[layer] = update
        self.updates += 1
