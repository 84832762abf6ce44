"""GRACE: a discrete key-value codebook adaptor at one layer (Hartvigsen et al., NeurIPS 2023).

The layer's weights never change. A codebook of entries (key, value, radius) sits on one
MLP block: at every token position the block's input is compared with the keys (Euclidean
distance); where the nearest key is within its radius (the *deferral radius*), the block's
output at that position is replaced by the entry's value; everywhere else the block runs
unchanged, so an input none of whose positions falls inside a radius gives **bit-identical**
outputs. Editing adds an entry: the key is the block input at the edit prompt's last token,
the value is trained (Adam, weights frozen) so that the model predicts the target with the
replacement in place. A new edit near an existing key with the *same* target widens that
entry's radius to cover it; with a *different* target both radii shrink to half their
distance, so neither covers the other (GRACE's expand / split rule).

The radius is ``radius × ‖key‖`` (a fraction of the key's own norm, so one setting works
across layers and models). ``retrieve`` reports which edit's entry, if any, a query's last
token falls into, so false deferrals on locality prompts are measured like false retrievals.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from harness.plugins.editor import Edit, Editor, EditTriple, editor
from methods.editors.parametric.base import (
    WeightEditor,
    can_run_tail,
    edit_batch,
    grad_only,
    mlp,
    module_hook,
    resolve_layer,
    run_through,
    tail_nll,
    target_nll,
)
from methods.editors.parametric.rome import STOP_NLL

DEFAULT_LAYER_FRACTION = 0.5
DEFAULT_RADIUS = 0.1
VALUE_STEPS = 40
VALUE_LR = 0.1
RETRIEVE_BATCH = 16


@dataclass
class Entry:
    """One codebook entry: it answers for ``edit`` (index into the editor's edits)."""

    key: torch.Tensor  # [d_model]
    value: torch.Tensor  # [d_model]
    radius: float
    target: str
    edit: int


class Codebook:
    """The entries, and the forward hook that applies them to one MLP block."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.deferred = 0
        """Positions replaced since the last :meth:`clear` (a cheap usage counter)."""

    def clear(self) -> None:
        """Drop every entry."""
        self.entries.clear()
        self.deferred = 0

    def nearest(self, queries: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Per query row ``[n, d]``: (index of the nearest key, whether it is within radius)."""
        keys = torch.stack([e.key for e in self.entries]).to(queries.dtype)
        radii = torch.tensor([e.radius for e in self.entries], dtype=queries.dtype,
                             device=queries.device)
        dist = torch.cdist(queries, keys)  # [n, m]
        best, index = dist.min(dim=1)
        return index, best <= radii[index]

    def hook(self, module: Any, args: tuple[Any, ...], output: torch.Tensor) -> torch.Tensor:
        """Replace the output where the input is inside some radius; else return it as is."""
        if not self.entries:
            return output
        inputs = args[0]
        flat = inputs.reshape(-1, inputs.shape[-1])
        index, inside = self.nearest(flat.detach())
        if not bool(inside.any()):
            return output
        values = torch.stack([e.value for e in self.entries]).to(output.dtype)
        out = output.reshape(-1, output.shape[-1]).clone()
        out[inside] = values[index[inside]]
        self.deferred += int(inside.sum())
        return out.reshape(output.shape)


@editor("grace", whitebox=True, extra="cpu",
        summary="GRACE: codebook adaptor with a deferral radius at one MLP layer (HF models)")
class GRACEEditor(WeightEditor):
    """A codebook on ``layer``'s MLP block; weights untouched."""

    name = "grace"

    def __init__(self, model: Any, tokenizer: Any, *, layer: int | None = None,
                 radius: float = DEFAULT_RADIUS, steps: int = VALUE_STEPS,
                 lr: float = VALUE_LR) -> None:
        if radius <= 0:
            raise ValueError(f"radius must be > 0, got {radius}")
        depth = int(model.config.num_hidden_layers)
        chosen = int(round(DEFAULT_LAYER_FRACTION * depth)) if layer is None else layer
        self.layer = resolve_layer(model, chosen)
        super().__init__(model, tokenizer, [])
        self.radius, self.steps, self.lr = radius, steps, lr
        self.codebook = Codebook()
        self._handle: Any = None

    @classmethod
    def build(cls, *, model: Any = None, tokenizer: Any = None,
              train: Sequence[EditTriple] | None = None) -> Editor:
        """GRACE on ``model`` (``train`` is unused: the codebook learns from the edits)."""
        if model is None or tokenizer is None:
            raise ValueError("grace is white-box: pass the HF model and tokenizer")
        return cls(model, tokenizer)

    def _install(self) -> None:
        if self._handle is None:
            self._handle = mlp(self.model, self.layer).register_forward_hook(self.codebook.hook)

    def _cleared(self) -> None:
        super()._cleared()
        if self._handle is not None:
            self._handle.remove()
            self._handle = None
        self.codebook.clear()

    def save_state(self) -> dict[str, Any]:
        """The base state plus every codebook entry (key, value, radius, target, edit)."""
        return {**super().save_state(), "deferred": self.codebook.deferred,
                "entries": [[e.key.clone(), e.value.clone(), e.radius, e.target, e.edit]
                            for e in self.codebook.entries]}

    def load_state(self, state: dict[str, Any]) -> None:
        """The saved codebook, hooked on the layer again when it has entries."""
        super().load_state(state)
        self.codebook.entries = [Entry(key, value, float(radius), str(target), int(edit))
                                 for key, value, radius, target, edit in state["entries"]]
        self.codebook.deferred = int(state["deferred"])
        if self.codebook.entries:
            self._install()

    def _added(self, edits: list[Edit]) -> None:
        first = len(self.edits) - len(edits)
        for offset, e in enumerate(edits):
            self._edit_one(e, first + offset)

    def _block_io(self, batch: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """(input, output) of the MLP block at each row's edit position, codebook applied."""
        seen: list[tuple[torch.Tensor, torch.Tensor]] = []

        def grab(module: Any, args: tuple[Any, ...], output: torch.Tensor) -> None:
            seen.append((args[0][batch.rows, batch.edit_pos].detach().clone(),
                         output[batch.rows, batch.edit_pos].detach().clone()))

        with module_hook(mlp(self.model, self.layer), grab), torch.no_grad():
            self.model(input_ids=batch.input_ids, use_cache=False)
        return seen[0]

    def _edit_one(self, edit: Edit, index: int) -> None:
        self._install()
        batch = self.batch([edit])
        keys, outputs = self._block_io(batch)
        key, start = keys[0], outputs[0]
        radius = self.radius * float(key.norm())
        book = self.codebook
        if book.entries:
            nearest, _ = book.nearest(key[None])
            entry = book.entries[int(nearest[0])]
            dist = float(torch.dist(key, entry.key.to(key.dtype)))
            if dist <= entry.radius + radius:  # the balls overlap
                if entry.target.strip() == edit.target.strip():
                    entry.radius = max(entry.radius, dist)  # expand: same answer
                    self.updates += 1
                    return
                entry.radius = radius = dist / 2  # split: both shrink to half the distance
        value = self._train_value(batch, start)
        book.entries.append(Entry(key, value, radius, edit.target, index))
        self.updates += 1

    def _train_value(self, batch: Any, start: torch.Tensor) -> torch.Tensor:
        """The replacement output at the edit position that makes the model say the target."""
        value = start.clone().requires_grad_(True)
        opt = torch.optim.Adam([value], lr=self.lr)
        if can_run_tail(self.model):
            nll_with = self._tail_nll(batch)
            with grad_only(self.model, []):
                self._descend(value, opt, nll_with)
            return value.detach()

        def replace(module: Any, args: Any, output: torch.Tensor) -> torch.Tensor:
            out = output.clone()
            out[batch.rows, batch.edit_pos] = value
            return out

        # the codebook hook runs first (other entries act as they will at inference), then
        # this one puts the trainable value at the edit position
        with module_hook(mlp(self.model, self.layer), replace), grad_only(self.model, []):
            self._descend(value, opt, lambda v: target_nll(self.model, batch))
        return value.detach()

    def _tail_nll(self, batch: Any) -> Callable[[torch.Tensor], torch.Tensor]:
        """The target NLL as a function of the value at the edit position, running only the
        layers above the codebook's: the block's output (codebook applied, as at inference)
        and the residual around it are read once, since nothing below changes while the
        value trains. Same numbers as the full forward up to rounding (tested)."""
        found: list[torch.Tensor] = []

        def take(module: Any, args: Any, output: torch.Tensor) -> None:
            found.append(output.detach())

        with module_hook(mlp(self.model, self.layer), take):
            leaving = run_through(self.model, self.layer, batch.input_ids)
        block = found[0]
        around = leaving - block

        def nll_with(value: torch.Tensor) -> torch.Tensor:
            out = block.clone()
            out[batch.rows, batch.edit_pos] = value
            return tail_nll(self.model, self.layer + 1, around + out, batch)

        return nll_with

    def _descend(self, value: torch.Tensor, opt: torch.optim.Optimizer,
                 nll_with: Callable[[torch.Tensor], torch.Tensor]) -> None:
        """Adam on ``value`` until every row's target NLL is below :data:`STOP_NLL` or the
        step budget is spent."""
        for _ in range(self.steps):
            nll = nll_with(value)
            if float(nll.detach().max()) < STOP_NLL:
                break
            (grad,) = torch.autograd.grad(nll.sum(), [value])
            opt.zero_grad()
            value.grad = grad
            opt.step()

    def retrieve(self, queries: Sequence[str]) -> list[int | None]:
        """Per query, the edit whose entry its last token falls into (``None``: deferred to
        the unedited layer)."""
        if not self.codebook.entries or not queries:
            return [None for _ in queries]
        out: list[int | None] = []
        for start in range(0, len(queries), RETRIEVE_BATCH):
            chunk = queries[start:start + RETRIEVE_BATCH]
            batch = edit_batch(self.tokenizer, [(q, "x") for q in chunk], self.device)
            keys, _ = self._block_io(batch)
            nearest, inside = self.codebook.nearest(keys)
            out += [self.codebook.entries[int(i)].edit if bool(ok) else None
                    for i, ok in zip(nearest, inside, strict=True)]
        return out
