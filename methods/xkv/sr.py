"""xKV's Selective Reconstruction (SR): at decode time, rebuild only the prompt tokens the
query needs from the shared low-rank factors, and attend to those alone.

Why: after xKV the prompt's keys/values live as cross-layer factors; rebuilding every token
at every step costs as much bandwidth as the raw cache. xKV (Chang et al., 2025; repo
abdelfattah-lab/xKV, ``xKV_SR``, after ShadowKV) scores fixed-size *chunks* of the prompt
with the current query against one *landmark* per chunk (the mean of the chunk's post-RoPE
keys, taken before compression and kept), rebuilds the top chunks per key/value head from
the factors and attends to them plus a raw *local window* (the prompt's last tokens and
everything decoded since). Selection here is **by attention score** (softmax of
``q . landmark / sqrt(d)`` over chunks, max over the query heads that share a key head, top
``n_select`` chunks per key head and query position); ``policy="recency"`` picks the last
``n_select`` chunks instead, the baseline that ignores the query. The rest of the prompt is
held only in its compressed form (factors + landmarks) and is not attended at that step.

Simulation, stated: the cache the model reads holds every prompt token rebuilt from the
factors, and SR restricts attention to the selected ones with a mask — numerically what
rebuilding only those rows gives. The attention function is registered with transformers'
``AttentionInterface`` under ``xkv_sr`` (sdpa underneath, so with every chunk selected it is
the unmodified sdpa call, bit for bit) and switched on per model while a plan is installed::

    plan = SRPlan(rows={0: RowPlan(start=0, chunk=8, landmarks=...)}, n_select=8)
    with selective(model, plan):
        model(...)            # decode steps attend to local window + selected chunks only
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch

NAME = "xkv_sr"
POLICIES = ("attention", "recency")

_PLANS: dict[int, SRPlan] = {}
"""Installed plans by ``id(model.config)`` (the object every attention module shares)."""


@dataclass
class RowPlan:
    """One batch row: where its prompt starts in the cache and one landmark per chunk.

    ``landmarks[layer]`` is ``[kv_heads, chunks, head_dim]``; the chunks cover cache
    positions ``start .. start + chunks * chunk``; positions after that (the local window
    and decoded tokens) are always attended.
    """

    start: int
    chunk: int
    landmarks: list[torch.Tensor]

    @property
    def chunks(self) -> int:
        """Selectable chunks."""
        return int(self.landmarks[0].shape[1]) if self.landmarks else 0


@dataclass
class SRPlan:
    """What SR needs for one batch, and counters of the work it did."""

    rows: dict[int, RowPlan]
    n_select: int
    policy: str = "attention"
    batch: int = 1
    rebuilt: dict[int, int] = field(default_factory=dict)
    """Per row: prompt tokens rebuilt, summed over layers x key heads x query positions."""
    candidates: dict[int, int] = field(default_factory=dict)
    """Per row: compressed prompt tokens that could have been rebuilt (same sum)."""
    selected: dict[int, list[torch.Tensor]] = field(default_factory=dict)
    """Per row, the last forward's selection: ``[kv_heads, q, n]`` chunk ids per layer."""

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise ValueError(f"policy must be one of {POLICIES}, not {self.policy!r}")
        if self.n_select < 0:
            raise ValueError("n_select must be >= 0")

    def rebuilt_fraction(self, row: int) -> float:
        """Row ``row``'s share of its compressed prompt rebuilt per step (1.0 = full
        reconstruction)."""
        total = self.candidates.get(row, 0)
        return self.rebuilt.get(row, 0) / total if total else 1.0


def landmarks(keys: torch.Tensor, chunk: int, chunks: int) -> torch.Tensor:
    """Chunk means of post-RoPE keys ``[1, kv_heads, tokens, d]`` -> ``[kv_heads, chunks, d]``
    over the first ``chunks * chunk`` tokens."""
    if chunk < 1 or chunks < 0:
        raise ValueError("chunk must be >= 1 and chunks >= 0")
    heads, dim = int(keys.shape[1]), int(keys.shape[3])
    body = keys[0, :, : chunks * chunk].float()
    return body.reshape(heads, chunks, chunk, dim).mean(dim=2)


def chunk_scores(query: torch.Tensor, marks: torch.Tensor, scaling: float) -> torch.Tensor:
    """Softmax over chunks of ``q . landmark * scaling``, max over each key head's group of
    query heads: ``query [heads, q, d]``, ``marks [kv_heads, chunks, d]`` -> ``[kv_heads, q,
    chunks]``."""
    kv_heads = int(marks.shape[0])
    heads, q_len, dim = query.shape
    grouped = query.float().reshape(kv_heads, heads // kv_heads, q_len, dim)
    logits = torch.einsum("hgqd,hcd->hgqc", grouped, marks.float()) * scaling
    return logits.softmax(dim=-1).amax(dim=1)


def select_chunks(
    query: torch.Tensor, marks: torch.Tensor, n_select: int, policy: str, scaling: float
) -> torch.Tensor:
    """Chunk ids to rebuild, ``[kv_heads, q, n]`` with ``n = min(n_select, chunks)``."""
    kv_heads, chunks = int(marks.shape[0]), int(marks.shape[1])
    q_len = int(query.shape[1])
    n = min(n_select, chunks)
    if policy == "recency":
        ids = torch.arange(chunks - n, chunks, device=marks.device)
        return ids.expand(kv_heads, q_len, n)
    return chunk_scores(query, marks, scaling).topk(n, dim=-1).indices


def _row_keep(plan: SRPlan, b: int, layer: int, query: torch.Tensor, kv_len: int,
              scaling: float) -> torch.Tensor | None:
    """Bool ``[heads, q, kv_len]`` for row ``b`` (None: every chunk selected)."""
    row = plan.rows.get(b)
    if row is None or row.chunks == 0:
        return None
    chunks, heads, q_len = row.chunks, int(query.shape[0]), int(query.shape[1])
    marks = row.landmarks[layer]
    kv_heads = int(marks.shape[0])
    n = min(plan.n_select, chunks)
    plan.rebuilt[b] = plan.rebuilt.get(b, 0) + n * row.chunk * kv_heads * q_len
    plan.candidates[b] = plan.candidates.get(b, 0) + chunks * row.chunk * kv_heads * q_len
    if n >= chunks:
        return None
    ids = select_chunks(query, marks, plan.n_select, plan.policy, scaling)
    if layer == 0 or b not in plan.selected:
        plan.selected[b] = []
    plan.selected[b].append(ids)
    chosen = torch.zeros(kv_heads, q_len, chunks, dtype=torch.bool, device=query.device)
    chosen.scatter_(-1, ids, True)
    keep = torch.ones(kv_heads, q_len, kv_len, dtype=torch.bool, device=query.device)
    span = slice(row.start, row.start + chunks * row.chunk)
    keep[:, :, span] = chosen.repeat_interleave(row.chunk, dim=-1)
    return keep.repeat_interleave(heads // kv_heads, dim=0)


def keep_mask(plan: SRPlan, layer: int, query: torch.Tensor, kv_len: int,
              scaling: float) -> torch.Tensor | None:
    """Bool ``[batch, heads, q, kv_len]``: the positions SR lets each query attend to
    (None when nothing is dropped, so the caller may run the unmodified attention)."""
    rows = [_row_keep(plan, b, layer, query[b], kv_len, scaling) for b in range(query.shape[0])]
    if all(r is None for r in rows):
        return None
    heads, q_len = int(query.shape[1]), int(query.shape[2])
    full = torch.ones(heads, q_len, kv_len, dtype=torch.bool, device=query.device)
    return torch.stack([full if r is None else r for r in rows])


def _combine(mask: torch.Tensor | None, keep: torch.Tensor, q_len: int) -> torch.Tensor:
    """The model's mask (bool/additive 4-D, or None = causal) AND SR's keep mask."""
    kv_len = int(keep.shape[-1])
    if mask is None:
        q_pos = torch.arange(q_len, device=keep.device).view(-1, 1) + (kv_len - q_len)
        allowed = torch.arange(kv_len, device=keep.device).view(1, -1) <= q_pos
        return keep & allowed
    if mask.dtype == torch.bool:
        return keep & mask
    return mask + torch.zeros_like(mask).masked_fill(~keep, torch.finfo(mask.dtype).min)


def sr_attention(
    module: Any,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    **kwargs: Any,
) -> tuple[torch.Tensor, Any]:
    """sdpa, with the installed plan's selection folded into the mask (plain sdpa when no
    plan is installed for this model, the batch does not match, or nothing is dropped)."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    plan = _PLANS.get(id(module.config))
    if plan is not None and int(key.shape[0]) == plan.batch:
        scaling = kwargs.get("scaling") or float(query.shape[-1]) ** -0.5
        keep = keep_mask(plan, int(module.layer_idx), query, int(key.shape[2]), scaling)
        if keep is not None:
            attention_mask = _combine(attention_mask, keep, int(query.shape[2]))
    return sdpa_attention_forward(module, query, key, value, attention_mask, **kwargs)


def register() -> None:
    """Register ``xkv_sr`` with transformers (attention and its sdpa-style mask), once."""
    from transformers import AttentionInterface
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, sdpa_mask

    AttentionInterface.register(NAME, sr_attention)
    ALL_MASK_ATTENTION_FUNCTIONS.register(NAME, sdpa_mask)


def install(model: Any, plan: SRPlan) -> str | None:
    """Switch ``model`` to SR attention with ``plan``; return the implementation it had."""
    register()
    previous = model.config._attn_implementation
    _PLANS[id(model.config)] = plan
    if previous != NAME:
        model.config._attn_implementation = NAME
    return previous if previous != NAME else None


def uninstall(model: Any, previous: str | None) -> None:
    """Drop the model's plan and restore its attention implementation."""
    _PLANS.pop(id(model.config), None)
    if previous is not None:
        model.config._attn_implementation = previous


@contextmanager
def selective(model: Any, plan: SRPlan) -> Iterator[SRPlan]:
    """Run forwards of ``model`` under ``plan`` (restored on exit, errors included)."""
    previous = install(model, plan)
    try:
        yield plan
    finally:
        uninstall(model, previous)


def landmark_bytes(marks: Sequence[torch.Tensor], dtype_bytes: int = 4) -> int:
    """Resident bytes of the landmarks (counted in SR's memory)."""
    return sum(int(m.numel()) * dtype_bytes for m in marks)
