"""ROME: a rank-one edit of one MLP down-projection (Meng et al., NeurIPS 2022).

The MLP output projection ``W`` of a middle layer is read as a key-value memory: the key
``k*`` is its input at the edit position, the value ``W k*`` is what it writes into the
residual stream. ROME finds a value ``v*`` that makes the model say the new target (a
vector added to the MLP output there, optimised by gradient descent with the weights frozen)
and then solves, in closed form, for the smallest change of ``W`` under the key covariance
``C`` that maps ``k*`` to ``v*``::

    W' = W + (v* − W k*) uᵀ,   u = C⁻¹ k* / (k*ᵀ C⁻¹ k*)

so ``W' k* = v*`` exactly while keys that are ``C``-orthogonal to ``k*`` keep their output.
Each edit of a sequence is one more rank-one update on the already-edited weights (the
sequential-ROME setting whose collapse the lifelong literature reports).

Deviations (small scale, documented): the edit position is the prompt's last token (no
subject span in MedVersa), ``v*`` is optimised on the edit prompt alone (no random prefixes,
no "essence" KL term), and ``C`` comes from the benchmark's own prompts with a ridge (see
:mod:`.covariance`).
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
    resolve_layer,
)
from methods.editors.parametric.covariance import DEFAULT_RIDGE, regularised, second_moments

DEFAULT_LAYER_FRACTION = 0.2  # early-middle layer: SmolLM2 (30 layers) -> 6, Qwen2.5 (24) -> 5
V_STEPS = 25
V_LR = 0.5
V_CLAMP = 4.0  # ROME's clamp_norm_factor
V_WEIGHT_DECAY = 0.5
STOP_NLL = 0.05


def default_layer(model: Any) -> int:
    """ROME's edit layer when none is given: ``DEFAULT_LAYER_FRACTION`` of the depth."""
    return int(round(DEFAULT_LAYER_FRACTION * int(model.config.num_hidden_layers)))


def rank_one_update(weight: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                    c_inv_key: torch.Tensor) -> torch.Tensor:
    """``(value − W key) uᵀ`` with ``u = C⁻¹key / (keyᵀ C⁻¹ key)`` (float64 in, float64 out)."""
    residual = value - weight.double() @ key
    u = c_inv_key / (key @ c_inv_key)
    return torch.outer(residual, u)


@editor("rome", whitebox=True, extra="cpu",
        summary="ROME: rank-one edit of one MLP down-projection with a key covariance (HF)")
class ROMEEditor(WeightEditor):
    """One rank-one update of ``layer``'s ``down_proj`` per edit, applied in order."""

    name = "rome"

    def __init__(self, model: Any, tokenizer: Any, corpus: Sequence[str], *,
                 layer: int | None = None, ridge: float = DEFAULT_RIDGE,
                 steps: int = V_STEPS, lr: float = V_LR) -> None:
        self.layer = resolve_layer(model, default_layer(model) if layer is None else layer)
        super().__init__(model, tokenizer, [down_proj(model, self.layer).weight])
        moment = second_moments(model, tokenizer, [self.layer], corpus)[self.layer]
        self.c_inv = torch.linalg.inv(regularised(moment, ridge))
        self.steps, self.lr = steps, lr

    @classmethod
    def build(cls, *, model: Any = None, tokenizer: Any = None,
              train: Sequence[EditTriple] | None = None) -> Editor:
        """ROME on ``model`` with ``C`` from the train triples' prompts."""
        if model is None or tokenizer is None:
            raise ValueError("rome is white-box: pass the HF model and tokenizer")
        return cls(model, tokenizer, corpus_texts(train))

    def _added(self, edits: list[Edit]) -> None:
        for e in edits:
            self._edit_one(e)

    def _edit_one(self, edit: Edit) -> None:
        batch = self.batch([edit])
        weight = down_proj(self.model, self.layer).weight
        key = keys_at(self.model, [self.layer], batch)[self.layer][0].double()
        delta = optimise_mlp_delta(self.model, self.layer, batch, steps=self.steps, lr=self.lr,
                                   clamp=V_CLAMP, weight_decay=V_WEIGHT_DECAY,
                                   stop_nll=STOP_NLL)[0].double()
        with torch.no_grad():
            value = weight.double() @ key + delta
            c_inv_key = self.c_inv.to(key.device) @ key
            weight.add_(rank_one_update(weight, key, value, c_inv_key).to(weight.dtype))
        self.updates += 1
