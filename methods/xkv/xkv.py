"""xKV: cross-layer SVD of the KV cache after prefill, with single-layer SVD as the baseline.

After the prompt's forward pass, every group of ``group`` adjacent layers has its keys
(RoPE undone, so position does not spread the spectrum) concatenated along the feature axis
into ``X [tokens, group * kv_heads * head_dim]``; a truncated SVD ``X ~ (U_r S_r) V_r^T`` keeps
one token-side factor shared by the group plus a per-group feature basis. Values get the
same treatment. The kept bytes are the factors, ``r * (tokens + group * features)`` floats per
group and tensor kind, instead of ``tokens * group * features``; ``group=1`` is the
single-layer SVD baseline (after Chang et al., xKV, 2025; repo abdelfattah-lab/xKV).

The setting is a target byte ratio for the prompt's cache (``ratio``): the rank is the
largest whose factors fit ``raw / ratio``, so one ``ratio`` costs the same memory whatever
the grouping, and curves compare at equal memory. ``ratio <= 1`` keeps the raw cache (the
method is then exactly the unmodified model); ``rank`` pins the rank instead (``rank`` at or
above ``min(tokens, features)`` is a lossless SVD, tested). Without ``select`` this
simulation rebuilds every prompt token from the factors for attention — xKV's full
reconstruction — and accounts for the factors only; tokens decoded afterwards are appended
uncompressed and counted raw.

``select=N`` turns on Selective Reconstruction (:mod:`methods.xkv.sr`): the prompt's last
``local`` tokens (plus the rounding remainder) stay raw, the rest is factored in chunks of
``chunk`` tokens with one landmark each (post-RoPE key mean, taken before compression), and
at every decode step each key head rebuilds and attends to only the ``N // chunk`` chunks
its queries score highest (``policy=attention``) or the latest ones (``policy=recency``).
SR's bytes are the factors + the raw local window + the landmarks.

    inspect eval harness/passkey --model whitebox/smollm2-135m -M method=xkv -M group=5 -M ratio=4
    inspect eval harness/passkey --model whitebox/smollm2-135m -M method=xkv -M group=5 \
        -M ratio=4 -M select=64
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from harness.plugins.whitebox_method import Method, RequestState, StepView, whitebox_method
from methods.kv.cache import (
    KVRun,
    LayerKV,
    flag,
    full_kv_bytes,
    greedy,
    kv_bytes,
    make_cache,
    prefix_agreement,
    rope,
    rope_tables,
    teacher_forced_agreement,
    tensor_bytes,
    unrope,
)
from methods.xkv import sr


@dataclass(frozen=True)
class GroupFactors:
    """What one group keeps for one tensor kind: ``coeffs [tokens, r]`` and ``basis [r, F]``
    (or the raw ``[tokens, F]`` matrix when factoring would not save memory)."""

    coeffs: torch.Tensor
    basis: torch.Tensor | None

    @property
    def nbytes(self) -> int:
        """Resident bytes of this group's factors (or raw matrix)."""
        extra = (self.basis,) if self.basis is not None else ()
        return tensor_bytes(self.coeffs, *extra)

    def dense(self) -> torch.Tensor:
        """The ``[tokens, F]`` matrix the factors stand for."""
        return self.coeffs if self.basis is None else self.coeffs @ self.basis


def rank_for_ratio(tokens: int, features: int, ratio: float) -> int:
    """Largest rank whose factors take at most ``1/ratio`` of the raw matrix's bytes."""
    budget = tokens * features / ratio
    return max(1, min(tokens, features, math.floor(budget / (tokens + features))))


def factorize(x: torch.Tensor, rank: int | None, ratio: float,
              dtype: torch.dtype | None = None) -> GroupFactors:
    """Truncated SVD of ``x [tokens, F]`` at ``rank`` (or the rank ``ratio`` affords).

    Computed in float64 so a full-rank factorisation reproduces ``x`` to float32 rounding.
    Keeps ``x`` raw when the factors would be no smaller and no rank was pinned. The factors
    are stored in ``dtype`` (default ``x``'s): the cache's own dtype, so that a bfloat16
    cache's factors cost bfloat16 bytes even when ``x`` was promoted on the way (pre-RoPE
    keys are computed against float32 rotary tables).
    """
    dtype = dtype or x.dtype
    tokens, features = x.shape
    if rank is None:
        if ratio <= 1:
            return GroupFactors(x.to(dtype, copy=True), None)
        rank = rank_for_ratio(tokens, features, ratio)
    rank = max(1, min(rank, tokens, features))
    u, s, vh = torch.linalg.svd(x.double(), full_matrices=False)
    coeffs = (u[:, :rank] * s[:rank]).to(dtype)
    return GroupFactors(coeffs, vh[:rank].to(dtype).contiguous())


def _flat(t: torch.Tensor) -> torch.Tensor:
    """``[1, heads, tokens, dim]`` -> ``[tokens, heads * dim]``."""
    return t[0].permute(1, 0, 2).reshape(t.shape[2], -1)


def _unflat(x: torch.Tensor, heads: int) -> torch.Tensor:
    tokens = x.shape[0]
    return x.reshape(tokens, heads, -1).permute(1, 0, 2).unsqueeze(0).contiguous()


def groups_of(n_layers: int, group: int) -> list[list[int]]:
    """Adjacent layer groups of size ``group`` (the last one may be smaller)."""
    if group < 1:
        raise ValueError("group must be >= 1")
    return [list(range(i, min(i + group, n_layers))) for i in range(0, n_layers, group)]


def compress(
    model: Any,
    layers: Sequence[LayerKV],
    group: int = 4,
    rank: int | None = None,
    ratio: float = 1.0,
) -> tuple[list[LayerKV], int]:
    """Compress one request's prefill cache (``[1, kv_heads, tokens, dim]`` per layer,
    positions ``0..tokens-1``); return the reconstructed layers and the bytes kept."""
    tokens = int(layers[0][0].shape[2])
    heads = int(layers[0][0].shape[1])
    positions = torch.arange(tokens, device=layers[0][0].device)
    cos, sin = rope_tables(model, positions)
    out: list[LayerKV | None] = [None] * len(layers)
    kept = 0
    for members in groups_of(len(layers), group):
        keys = torch.cat([_flat(unrope(layers[i][0], cos, sin)) for i in members], dim=1)
        values = torch.cat([_flat(layers[i][1]) for i in members], dim=1)
        dtype = layers[members[0]][0].dtype  # the cache's dtype, not the promoted keys'
        fk, fv = factorize(keys, rank, ratio, dtype), factorize(values, rank, ratio, dtype)
        kept += fk.nbytes + fv.nbytes
        dk, dv = fk.dense(), fv.dense()
        width = dk.shape[1] // len(members)
        for j, i in enumerate(members):
            part = slice(j * width, (j + 1) * width)
            k = rope(_unflat(dk[:, part], heads), cos, sin)
            out[i] = (k.to(layers[i][0].dtype), _unflat(dv[:, part], heads).to(layers[i][1].dtype))
    return [pair for pair in out if pair is not None], kept


_REFERENCES: dict[tuple[int, tuple[int, ...]], tuple[int, list[int]]] = {}
"""Greedy full-cache tokens by (model, prompt ids): (steps run, tokens). Greedy decoding is
deterministic, so the first n tokens of a longer run are the n-token run; cells of a study
that share items (same process) decode each reference once."""


def reference_tokens(model: Any, prompt_ids: tuple[int, ...], n: int,
                     run: Callable[[], list[int]]) -> list[int]:
    """The model's own greedy tokens for ``prompt_ids`` (``n`` steps), from the memo when
    an earlier request ran at least as many steps (``run()`` decodes them otherwise)."""
    key = (id(model), prompt_ids)
    known = _REFERENCES.get(key)
    if known is not None and known[0] >= n:
        return known[1][:n]
    tokens = run()
    if len(_REFERENCES) > 4096:
        _REFERENCES.clear()
    _REFERENCES[key] = (n, tokens)
    return tokens


def _row(layers: Sequence[LayerKV], row: int, start: int) -> list[LayerKV]:
    return [
        (k[row : row + 1, :, start:].clone(), v[row : row + 1, :, start:].clone())
        for k, v in layers
    ]


@whitebox_method("xkv")
class XKV(Method):
    """``-M method=xkv``: compress the prompt's cache once after prefill (see module doc).

    Options: ``group`` (layers per SVD; 1 = single-layer baseline), ``ratio`` (target byte
    ratio of the prompt cache) or ``rank`` (pinned), ``reference`` (also decode with the
    full cache and report agreement; doubles the cost); Selective Reconstruction:
    ``select`` (prompt tokens rebuilt per key head and step; none = full reconstruction),
    ``chunk`` (tokens per landmark), ``local`` (raw prompt tail), ``policy``
    (``attention`` or ``recency``).
    """

    name = "xkv"

    def __init__(
        self,
        group: int = 4,
        ratio: float = 1.0,
        rank: int | None = None,
        reference: bool = True,
        select: int | str | None = None,
        chunk: int = 8,
        local: int = 16,
        policy: str = "attention",
    ) -> None:
        self.group = int(group)
        self.ratio = float(ratio)
        self.rank = None if rank in (None, "none", "") else int(rank)  # type: ignore[arg-type]
        self.reference = flag(reference)
        self.select = None if select in (None, "none", "") else int(select)  # type: ignore[arg-type]
        self.chunk, self.local, self.policy = int(chunk), int(local), str(policy)
        if self.group < 1:
            raise ValueError("group must be >= 1")
        if self.select is not None and (self.select < 0 or self.chunk < 1 or self.local < 0):
            raise ValueError("select and local must be >= 0 and chunk >= 1")
        if self.policy not in sr.POLICIES:
            raise ValueError(f"policy must be one of {sr.POLICIES}, not {self.policy!r}")
        self._previous: str | None = None
        self._plan: sr.SRPlan | None = None

    def start(self, lm: Any, states: Sequence[RequestState]) -> None:
        """Drop any SR plan a failed earlier batch left installed."""
        self._release(lm)

    def _release(self, lm: Any) -> None:
        if self._plan is not None:
            sr.uninstall(lm.model, self._previous)
            self._plan, self._previous = None, None

    def _pack(self, lm: Any, row: list[LayerKV]) -> tuple[list[LayerKV], int, sr.RowPlan | None]:
        """Compress one unpadded row; with SR, keep the local tail raw and add landmarks."""
        if self.select is None:
            packed, kept = compress(lm.model, row, self.group, self.rank, self.ratio)
            return packed, kept, None
        tokens = int(row[0][0].shape[2])
        chunks = max(0, (tokens - self.local) // self.chunk)
        body = chunks * self.chunk
        marks = [sr.landmarks(k, self.chunk, chunks) for k, _ in row]
        tail = [(k[:, :, body:], v[:, :, body:]) for k, v in row]
        kept = kv_bytes(tail) + sr.landmark_bytes(marks)
        if body:
            head, factors = compress(lm.model, [(k[:, :, :body], v[:, :, :body]) for k, v in row],
                                     self.group, self.rank, self.ratio)
            kept += factors
            packed = [(torch.cat([hk, tk], dim=2), torch.cat([hv, tv], dim=2))
                      for (hk, hv), (tk, tv) in zip(head, tail, strict=True)]
        else:
            packed = [(k.clone(), v.clone()) for k, v in row]
        return packed, kept, sr.RowPlan(0, self.chunk, marks)

    def _row_plan(self, row_plan: sr.RowPlan, start: int) -> sr.RowPlan:
        return sr.RowPlan(start, row_plan.chunk, row_plan.landmarks)

    def after_prefill(self, lm: Any, view: StepView, states: Sequence[RequestState]) -> Any:
        """Compress every row's (unpadded) prompt cache; return the rebuilt batch cache."""
        from methods.kv.cache import layers_of

        layers = layers_of(view.cache)
        mask = view.attention_mask
        new = [(k.clone(), v.clone()) for k, v in layers]
        plans: dict[int, sr.RowPlan] = {}
        for state in states:
            b = state.index
            start = int(mask.shape[1] - mask[b].sum())
            row = _row(layers, b, start)
            packed, kept, row_plan = self._pack(lm, row)
            if row_plan is not None:
                plans[b] = self._row_plan(row_plan, start)
            for (k, v), (pk, pv) in zip(new, packed, strict=True):
                k[b : b + 1, :, start:] = pk
                v[b : b + 1, :, start:] = pv
            state.data["xkv"] = {
                "kept": kept,
                "raw": kv_bytes(row),
                "full_tokens": mask.shape[1] - start,
                "first_logits": view.logits[b].float().clone(),
                "full": row if self.reference else None,
                "packed": [(k.clone(), v.clone()) for k, v in packed] if self.reference else None,
                "row_plan": row_plan,
                "prompt_ids": tuple(view.input_ids[b, start:].tolist()),
            }
        if plans:
            self._release(lm)
            self._plan = sr.SRPlan(plans, self.select // self.chunk if self.select else 0,
                                   self.policy, batch=int(mask.shape[0]))
            self._previous = sr.install(lm.model, self._plan)
        return make_cache(new)

    def finish(self, lm: Any, states: Sequence[RequestState]) -> None:
        """Account bytes (factors + decoded tokens raw) and compare with the full cache."""
        per_token = full_kv_bytes(lm.model.config, 1)
        plan = self._plan
        self._release(lm)
        for state in states:
            info = state.data.pop("xkv")
            # tokens decoded after the prompt stay raw; the last one is never fed back
            decoded = per_token * max(len(state.tokens) - 1, 0)
            prompt = int(info["full_tokens"])
            run = KVRun(state.tokens, "", prompt, info["kept"] + decoded, info["raw"] + decoded)
            run.extra = {"group": self.group, "ratio_setting": self.ratio}
            row_plan = info["row_plan"]
            if plan is not None and row_plan is not None:
                run.extra.update(sr_select=self.select, sr_policy=self.policy,
                                 sr_chunks=row_plan.chunks,
                                 sr_rebuilt_fraction=plan.rebuilt_fraction(state.index))
            if self.reference:
                n = max(len(state.tokens), 1)
                ref = reference_tokens(lm.model, info["prompt_ids"], n,
                                       functools.partial(greedy, lm.model, info["first_logits"],
                                                         make_cache(info["full"]), n,
                                                         lm.tokenizer.eos_token_id))
                run.exact = ref == state.tokens
                packed = make_cache(info["packed"])
                if row_plan is not None and self.select is not None:
                    one = sr.SRPlan({0: row_plan}, self.select // self.chunk, self.policy)
                    with sr.selective(lm.model, one):
                        run.agreement = teacher_forced_agreement(
                            lm.model, info["first_logits"], packed, ref)
                else:
                    run.agreement = teacher_forced_agreement(
                        lm.model, info["first_logits"], packed, ref)
                run.extra["prefix_agreement"] = prefix_agreement(state.tokens, ref)
            state.data["metadata"] = {"kv": run.metadata()}
