"""What every weight-editing editor shares: the model's MLP layers, edit batches, restore.

Parametric editors (FT-L, ROME, MEMIT, GRACE) change the model itself instead of a text
context, so the :class:`~harness.plugins.editor.Editor` interface is used like this:

* ``apply(edits)`` writes the edits into the weights (or, for GRACE, into an adaptor hooked
  on one layer) — one call is one edit operation (MEMIT solves one batch jointly);
* ``reset()`` restores the touched tensors bit for bit from a snapshot taken at build time
  and removes any hook, which is the "restore" step between independent evaluations;
* ``contexts`` is always empty and ``hooks`` does nothing per query: every query already
  goes through the edited weights, so ``retrieve`` reports :data:`ALL_EDITS` (as IKE does),
  and GRACE overrides it with its codebook hits.

The edit position is the **last prompt token**. ROME and MEMIT edit at the last token of the
*subject*, but :class:`~harness.plugins.editor.Edit` carries no subject span (MedVersa questions
have none), so the prompt's last token stands in for it — a documented deviation.

Token construction follows the benchmark's white-box scorer (spec §2.1): ``prompt`` and
``prompt + " " + target`` are tokenised with the tokenizer's own special tokens; the input is
all but the last token; target positions are those from the prompt's last position on.
Methods never import the benchmark, so this is restated here in a few lines.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from harness.plugins.editor import ALL_EDITS, Edit, Editor, EditTriple


def decoder_layers(model: Any) -> Any:
    """The transformer blocks of a Llama/Qwen2/Mistral-style HF causal LM."""
    inner = getattr(model, "model", None)
    layers = getattr(inner, "layers", None)
    if layers is None:
        raise TypeError(f"{type(model).__name__}: parametric editors need a model.model.layers "
                        "decoder with .mlp.down_proj (Llama, Qwen2, Mistral)")
    return layers


def mlp(model: Any, layer: int) -> Any:
    """The MLP block of ``layer``."""
    return decoder_layers(model)[layer].mlp


def down_proj(model: Any, layer: int) -> Any:
    """The MLP output projection of ``layer`` (``weight``: ``[d_model, d_ff]``)."""
    return mlp(model, layer).down_proj


def resolve_layer(model: Any, layer: int) -> int:
    """A non-negative layer index (negative counts from the top); a clear error if out of range."""
    n = len(decoder_layers(model))
    index = layer + n if layer < 0 else layer
    if not 0 <= index < n:
        raise ValueError(f"layer {layer} out of range: the model has {n} layers")
    return index


@dataclass(frozen=True)
class EditBatch:
    """Right-padded teacher-forced inputs of several edits (no attention mask: causal
    attention never lets a real position see padding to its right)."""

    input_ids: torch.Tensor  # [B, S]
    labels: torch.Tensor  # [B, S], -100 outside target positions
    edit_pos: torch.Tensor  # [B], last prompt token of each row

    @property
    def rows(self) -> torch.Tensor:
        """``arange(B)``, for indexing one position per row."""
        return torch.arange(self.input_ids.shape[0], device=self.input_ids.device)


def token_ids(tokenizer: Any, text: str) -> list[int]:
    """Ids exactly as the benchmark's white-box runner tokenises (special tokens included)."""
    return list(tokenizer(text).input_ids)


def pad_id(tokenizer: Any) -> int:
    """The id right padding uses: the pad token, or EOS where the tokenizer has none."""
    pad = tokenizer.pad_token_id
    return int(pad if pad is not None else tokenizer.eos_token_id)


def edit_batch(tokenizer: Any, pairs: Sequence[tuple[str, str]], device: Any) -> EditBatch:
    """Teacher-forced batch for (prompt, target) pairs."""
    if not pairs:
        raise ValueError("no edits")
    pad = pad_id(tokenizer)
    rows: list[tuple[list[int], list[int], int]] = []
    for prompt, target in pairs:
        if not target.strip():
            raise ValueError(f"edit {prompt!r} has an empty target")
        spaced = target if target.startswith(" ") else " " + target
        n_prompt = len(token_ids(tokenizer, prompt))
        ids = token_ids(tokenizer, prompt + spaced)
        if n_prompt < 1 or n_prompt >= len(ids):
            raise ValueError(f"target {target!r} adds no tokens after prompt {prompt!r}")
        inputs, labels = ids[:-1], ids[1:]
        masked = [y if j >= n_prompt - 1 else -100 for j, y in enumerate(labels)]
        rows.append((inputs, masked, n_prompt - 1))
    width = max(len(r[0]) for r in rows)
    ids_t = torch.tensor([r[0] + [pad] * (width - len(r[0])) for r in rows], device=device)
    lab_t = torch.tensor([r[1] + [-100] * (width - len(r[1])) for r in rows], device=device)
    pos_t = torch.tensor([r[2] for r in rows], device=device)
    return EditBatch(ids_t, lab_t, pos_t)


def target_nll(model: Any, batch: EditBatch) -> torch.Tensor:
    """Mean negative log-likelihood of each row's target tokens: ``[B]``.

    Only target positions go through the LM head (a large share of a short probe's cost).
    """
    mask = batch.labels != -100
    head = getattr(model, "lm_head", None)
    if head is not None:
        hidden = model.model(input_ids=batch.input_ids, use_cache=False).last_hidden_state
        return nll_from_hidden(model, hidden, batch)
    logits = model(input_ids=batch.input_ids, use_cache=False).logits[mask]
    return _row_nll(logits, batch)


TAIL_MODEL_TYPES = frozenset({"llama", "qwen2", "mistral"})
"""Architectures whose decoder takes the residual stream as ``inputs_embeds`` unchanged
(no embedding scale), so the layers above an edited one can run alone."""


def can_run_tail(model: Any) -> bool:
    """True when :func:`layers_from` is exact for ``model``."""
    return (getattr(getattr(model, "config", None), "model_type", None) in TAIL_MODEL_TYPES
            and getattr(model, "lm_head", None) is not None)


@contextlib.contextmanager
def layers_from(model: Any, start: int) -> Iterator[None]:
    """Inside the block ``model.model`` holds only its decoder layers from ``start`` on, so
    ``model.model(inputs_embeds=h)`` runs them on ``h``, the residual stream leaving layer
    ``start − 1``. Editors that train one layer's output use it to skip the layers below,
    whose result does not change while they train (most of each step's cost)."""
    inner = model.model
    layers = inner.layers
    inner.layers = torch.nn.ModuleList(list(layers)[start:])
    try:
        yield
    finally:
        inner.layers = layers


class StopForward(Exception):
    """Raised by a hook to end a forward pass once what it needs has been read."""


def run_through(model: Any, layer: int, input_ids: torch.Tensor) -> torch.Tensor:
    """The residual stream leaving decoder layer ``layer`` for ``input_ids`` ``[B, S, d]``,
    without running the layers above it (no gradients). Hooks already placed on modules at
    or below ``layer`` fire as in a full forward, so callers read what they need with them."""
    found: list[torch.Tensor] = []

    def leave(module: Any, args: Any, output: Any) -> None:
        found.append((output[0] if isinstance(output, tuple) else output).detach())
        raise StopForward

    with module_hook(decoder_layers(model)[layer], leave), torch.no_grad(), \
            contextlib.suppress(StopForward):
        model(input_ids=input_ids, use_cache=False)
    return found[0]


def tail_nll(model: Any, start: int, hidden: torch.Tensor, batch: EditBatch) -> torch.Tensor:
    """:func:`target_nll` computed from ``hidden``, the residual stream leaving layer
    ``start − 1``: only the layers from ``start`` on run (needs :func:`can_run_tail`)."""
    with layers_from(model, start):
        last = model.model(inputs_embeds=hidden, use_cache=False).last_hidden_state
    return nll_from_hidden(model, last, batch)


def nll_from_hidden(model: Any, hidden: torch.Tensor, batch: EditBatch) -> torch.Tensor:
    """:func:`target_nll` from the decoder's last hidden state ``[B, S, d]``."""
    return _row_nll(model.lm_head(hidden[batch.labels != -100]), batch)


def _row_nll(logits: torch.Tensor, batch: EditBatch) -> torch.Tensor:
    """Per row, the mean NLL of its target tokens, from the logits at target positions."""
    mask = batch.labels != -100
    logp = torch.log_softmax(logits.float(), dim=-1)
    token = -logp.gather(1, batch.labels[mask][:, None])[:, 0]
    row_of = torch.nonzero(mask)[:, 0]
    total = torch.zeros(batch.input_ids.shape[0], device=token.device).index_add(0, row_of, token)
    return total / mask.sum(dim=1).clamp_min(1)


@contextlib.contextmanager
def module_hook(module: Any, hook: Callable[..., Any], pre: bool = False) -> Iterator[None]:
    """A forward (or forward-pre) hook on ``module`` for the duration of the block."""
    handle = (module.register_forward_pre_hook(hook) if pre
              else module.register_forward_hook(hook))
    try:
        yield
    finally:
        handle.remove()


@contextlib.contextmanager
def grad_only(model: Any, tensors: Sequence[torch.Tensor]) -> Iterator[None]:
    """Inside the block, gradients are on and only ``tensors`` of ``model`` require them
    (backward then skips every other weight); the flags are restored afterwards."""
    params = list(model.parameters())
    flags = [p.requires_grad for p in params]
    keep = {id(t) for t in tensors}
    try:
        for p in params:
            p.requires_grad_(id(p) in keep)
        with torch.enable_grad():
            yield
    finally:
        for p, flag in zip(params, flags, strict=True):
            p.requires_grad_(flag)


def keys_at(model: Any, layers: Sequence[int], batch: EditBatch) -> dict[int, torch.Tensor]:
    """The input of each layer's ``down_proj`` at every row's edit position: ``{l: [B, d_ff]}``."""
    found: dict[int, torch.Tensor] = {}

    def grab(layer: int) -> Callable[..., None]:
        def hook(module: Any, args: tuple[Any, ...]) -> None:
            found[layer] = args[0][batch.rows, batch.edit_pos].detach().clone()
        return hook

    with contextlib.ExitStack() as stack, torch.no_grad():
        for layer in layers:
            stack.enter_context(module_hook(down_proj(model, layer), grab(layer), pre=True))
        model(input_ids=batch.input_ids, use_cache=False)
    return found


def residual_at(model: Any, layer: int, batch: EditBatch) -> torch.Tensor:
    """The residual stream leaving ``layer`` at every row's edit position: ``[B, d_model]``."""
    found: list[torch.Tensor] = []

    def hook(module: Any, args: Any, output: Any) -> None:
        hidden = output[0] if isinstance(output, tuple) else output
        found.append(hidden[batch.rows, batch.edit_pos].detach().clone())

    with module_hook(decoder_layers(model)[layer], hook), torch.no_grad():
        model(input_ids=batch.input_ids, use_cache=False)
    return found[0]


def optimise_mlp_delta(model: Any, layer: int, batch: EditBatch, *, steps: int, lr: float,
                       clamp: float, weight_decay: float, stop_nll: float) -> torch.Tensor:
    """Per row, a vector added to ``layer``'s MLP output at the edit position so that the
    model predicts the row's target (ROME's ``v`` / MEMIT's ``z``): ``[B, d_model]``.

    Adam on the delta only (no weight gradient is computed); ``||delta||`` is clamped to
    ``clamp`` × the norm of the MLP output it is added to, and penalised by ``weight_decay``
    × ``||delta||² / ||output||²``; stops once every row's target NLL is below ``stop_nll``.
    """
    block = mlp(model, layer)
    base: list[torch.Tensor] = []

    def record(module: Any, args: Any, output: torch.Tensor) -> None:
        base.append(output[batch.rows, batch.edit_pos].detach().clone())

    with module_hook(block, record), torch.no_grad():
        model(input_ids=batch.input_ids, use_cache=False)
    scale = base[0].norm(dim=1, keepdim=True).clamp_min(1e-6)  # [B, 1]
    delta = torch.zeros_like(base[0], requires_grad=True)
    opt = torch.optim.Adam([delta], lr=lr)

    def add(module: Any, args: Any, output: torch.Tensor) -> torch.Tensor:
        out = output.clone()
        out[batch.rows, batch.edit_pos] = out[batch.rows, batch.edit_pos] + delta
        return out

    with module_hook(block, add), grad_only(model, []):
        for _ in range(steps):
            nll = target_nll(model, batch)
            if float(nll.detach().max()) < stop_nll:
                break
            decay = weight_decay * (delta.norm(dim=1) ** 2 / scale[:, 0] ** 2)
            loss = (nll + decay).sum()
            (grad,) = torch.autograd.grad(loss, [delta])
            opt.zero_grad()
            delta.grad = grad
            opt.step()
            with torch.no_grad():
                norms = delta.norm(dim=1, keepdim=True)
                delta.mul_(torch.clamp(clamp * scale / norms.clamp_min(1e-12), max=1.0))
    return delta.detach()


def corpus_texts(train: Sequence[EditTriple] | None) -> list[str]:
    """The covariance corpus from the benchmark's train triples: every distinct prompt,
    paraphrase and locality prompt, in first-seen order (no edit targets: a key covariance
    should describe ordinary inputs, not the counterfactual answers). Rows may carry more
    than the triple (the benchmark's 5-field train rows add the target and the locality
    answer, which MedREK needs); only their first three fields are read."""
    seen: dict[str, None] = {}
    for triple in train or ():
        for text in tuple(triple)[:3]:
            if text.strip():
                seen.setdefault(text, None)
    return list(seen)


class WeightEditor(Editor):
    """Base of the parametric editors: snapshot at build, exact restore on ``reset``."""

    name = "weights"

    def __init__(self, model: Any, tokenizer: Any, tensors: Sequence[torch.nn.Parameter]) -> None:
        super().__init__()
        self.model = model
        self.tokenizer = tokenizer
        self._touched = list(tensors)
        self._snapshot = [t.detach().clone() for t in self._touched]
        self.updates = 0
        """Weight updates written since the last reset (MEMIT: one per ``apply`` call)."""

    @property
    def device(self) -> Any:
        """Where the model's parameters live."""
        return next(self.model.parameters()).device

    def batch(self, edits: Sequence[Edit]) -> EditBatch:
        """The teacher-forced batch of ``edits``."""
        return edit_batch(self.tokenizer, [(e.prompt, e.target) for e in edits], self.device)

    def _cleared(self) -> None:
        with torch.no_grad():
            for tensor, original in zip(self._touched, self._snapshot, strict=True):
                tensor.copy_(original)
        self.updates = 0

    def save_state(self) -> dict[str, Any]:
        """The edits, the update count and a copy of every touched tensor as it is now."""
        return {"edits": [[e.prompt, e.target] for e in self.edits], "updates": self.updates,
                "tensors": [t.detach().clone() for t in self._touched]}

    def load_state(self, state: dict[str, Any]) -> None:
        """The touched tensors, edits and update count of a :meth:`save_state`, bit for bit
        (no edit is replayed: a weight editor's result depends on every earlier edit)."""
        tensors = state["tensors"]
        shapes = [tuple(t.shape) for t in self._touched]
        if [tuple(t.shape) for t in tensors] != shapes:
            raise ValueError(f"{self.name}: the saved tensors have shapes "
                             f"{[tuple(t.shape) for t in tensors]}, this editor touches {shapes}")
        self.reset()
        with torch.no_grad():
            for tensor, saved in zip(self._touched, tensors, strict=True):
                tensor.copy_(saved.to(tensor.device, tensor.dtype))
        self.edits = [Edit(prompt, target) for prompt, target in state["edits"]]
        self.updates = int(state["updates"])

    def is_restored(self) -> bool:
        """True when every touched tensor equals its snapshot bit for bit."""
        return all(torch.equal(t.detach(), s) for t, s in zip(self._touched, self._snapshot,
                                                              strict=True))

    def retrieve(self, queries: Sequence[str]) -> list[int | None]:
        """Every query runs through the edited weights: all edits (none before any edit)."""
        return [ALL_EDITS if self.edits else None for _ in queries]

    def contexts(self, queries: Sequence[str]) -> list[str]:
        """No text context: the edit is in the weights."""
        return ["" for _ in queries]

    def answer(self, prompt: str, generate: Callable[[str], str]) -> str:
        """A black-box model has no weights to edit."""
        raise TypeError(f"{self.name} edits weights: score it on an HF model (whitebox/ or hf/)")
