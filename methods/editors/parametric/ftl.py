"""FT-L: constrained fine-tuning of one MLP layer on the edits (the baseline of Zhu et al.
2020 as used in the ROME paper).

Adam on the ``down_proj`` weight of one layer only, minimising the targets' negative
log-likelihood (teacher-forced, prompt + target); after every step the weight is clipped
elementwise to within ``epsilon`` of its value at the start of the ``apply`` call (the L∞
norm constraint that keeps unconstrained fine-tuning from destroying locality). Every other
parameter of the model is left bit-identical. One ``apply`` call fine-tunes on its edits
jointly; sequential editing calls it once per edit, so the constraint is per edit and the
drift accumulates, which is the lifelong setting.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from harness.plugins.editor import Edit, Editor, EditTriple, editor
from methods.editors.parametric.base import (
    WeightEditor,
    down_proj,
    grad_only,
    resolve_layer,
    target_nll,
)
from methods.editors.parametric.rome import STOP_NLL, default_layer

DEFAULT_STEPS = 25
DEFAULT_LR = 5e-4
DEFAULT_EPSILON = 5e-3


@editor("ft-l", whitebox=True, extra="cpu",
        summary="FT-L: norm-constrained fine-tuning of one MLP down-projection (HF models)")
class FTLEditor(WeightEditor):
    """Fine-tunes ``layer``'s ``down_proj`` weight on each ``apply`` call's edits."""

    name = "ft-l"

    def __init__(self, model: Any, tokenizer: Any, *, layer: int | None = None,
                 steps: int = DEFAULT_STEPS, lr: float = DEFAULT_LR,
                 epsilon: float = DEFAULT_EPSILON) -> None:
        if epsilon <= 0:
            raise ValueError(f"epsilon must be > 0, got {epsilon}")
        self.layer = resolve_layer(model, default_layer(model) if layer is None else layer)
        super().__init__(model, tokenizer, [down_proj(model, self.layer).weight])
        self.steps, self.lr, self.epsilon = steps, lr, epsilon

    @classmethod
    def build(cls, *, model: Any = None, tokenizer: Any = None,
              train: Sequence[EditTriple] | None = None) -> Editor:
        """FT-L on ``model`` (it learns from the edits alone; ``train`` is unused)."""
        if model is None or tokenizer is None:
            raise ValueError("ft-l is white-box: pass the HF model and tokenizer")
        return cls(model, tokenizer)

    def _added(self, edits: list[Edit]) -> None:
        if not edits:
            return
        batch = self.batch(edits)
        weight = down_proj(self.model, self.layer).weight
        start = weight.detach().clone()
        opt = torch.optim.Adam([weight], lr=self.lr)
        with grad_only(self.model, [weight]):
            for _ in range(self.steps):
                nll = target_nll(self.model, batch)
                if float(nll.detach().max()) < STOP_NLL:
                    break
                opt.zero_grad()
                nll.mean().backward()  # type: ignore[no-untyped-call]
                opt.step()
                with torch.no_grad():
                    weight.copy_(torch.clamp(weight, start - self.epsilon, start + self.epsilon))
            weight.grad = None
        self.updates += 1
