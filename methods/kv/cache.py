"""KV-cache plumbing shared by the KV methods: tensors in and out of a transformers cache,
RoPE undo/redo, byte accounting, greedy decoding from a cache, and agreement metrics.

Why one module: xKV, ArborKV and SCD all do the same three things — take the cache a
prefill left behind, replace some of its tensors, then decode from it and compare with the
unmodified model — and they must count bytes the same way for their memory/quality curves
to be comparable. A cache here is the ``DynamicCache`` that :class:`WhiteBoxLM` forwards
return; its per-layer tensors are ``[batch=1, kv_heads, seq, head_dim]``, keys *after* RoPE.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

LayerKV = tuple[torch.Tensor, torch.Tensor]
"""(keys, values) of one layer, each ``[1, kv_heads, seq, head_dim]``."""


def cache_arg(model: Any) -> str:
    """Name of the model's KV-cache kwarg (transformers 5 renamed ``past_key_values``)."""
    params = inspect.signature(model.forward).parameters
    return "cache" if "cache" in params else "past_key_values"


def layers_of(cache: Any) -> list[LayerKV]:
    """The cache's per-layer (keys, values), in layer order (tensors are not copied)."""
    if hasattr(cache, "layers"):
        return [(layer.keys, layer.values) for layer in cache.layers]
    return [(k, v) for k, v in cache]  # legacy tuple-of-tuples


def make_cache(layers: Sequence[LayerKV]) -> Any:
    """A fresh ``DynamicCache`` holding copies of ``layers`` (so later decoding never writes
    into tensors a caller still owns)."""
    from transformers.cache_utils import DynamicCache

    cache = DynamicCache()
    for i, (k, v) in enumerate(layers):
        cache.update(k.clone(), v.clone(), i)
    return cache


def clone_cache(cache: Any) -> Any:
    """Deep copy of a cache: decoding appends in place, branches must not share storage."""
    return make_cache(layers_of(cache))


def seq_len(layers: Sequence[LayerKV]) -> int:
    """Tokens held (sequence axis of the first layer's keys)."""
    return int(layers[0][0].shape[-2]) if layers else 0


def tensor_bytes(*tensors: torch.Tensor) -> int:
    """Bytes of the given tensors' elements (what a cache must keep resident)."""
    return sum(int(t.numel()) * t.element_size() for t in tensors)


def kv_bytes(cache_or_layers: Any) -> int:
    """Bytes of every key and value tensor in a cache (or a list of layer pairs)."""
    layers = cache_or_layers if isinstance(cache_or_layers, list) else layers_of(cache_or_layers)
    return sum(tensor_bytes(k, v) for k, v in layers)


def full_kv_bytes(config: Any, tokens: int, dtype_bytes: int = 4) -> int:
    """Bytes an uncompressed cache of ``tokens`` tokens needs: 2 x layers x kv_heads x
    head_dim x tokens x dtype. The reference every method's memory is stated against."""
    head_dim = int(getattr(config, "head_dim", config.hidden_size // config.num_attention_heads))
    kv_heads = int(getattr(config, "num_key_value_heads", config.num_attention_heads))
    return 2 * int(config.num_hidden_layers) * kv_heads * head_dim * tokens * dtype_bytes


# --- RoPE -------------------------------------------------------------------------------


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rope_tables(model: Any, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """cos, sin ``[1, seq, head_dim]`` of the model's own rotary embedding at ``positions``."""
    rotary = model.model.rotary_emb
    probe = torch.zeros(1, dtype=torch.float32, device=positions.device)
    cos, sin = rotary(probe, positions.view(1, -1))
    return cos, sin


def unrope(keys: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Pre-RoPE keys from cached (rotated) keys: RoPE is a rotation, undone by its inverse."""
    return keys * cos.unsqueeze(1) - _rotate_half(keys) * sin.unsqueeze(1)


def rope(keys: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Apply RoPE exactly as the Llama attention does (``x cos + rotate_half(x) sin``)."""
    return keys * cos.unsqueeze(1) + _rotate_half(keys) * sin.unsqueeze(1)


# --- decoding ---------------------------------------------------------------------------


def step(model: Any, ids: torch.Tensor, cache: Any) -> Any:
    """One forward of ``ids [1, n]`` continuing ``cache`` (appended in place); no grad."""
    with torch.inference_mode():
        return model(input_ids=ids, use_cache=True, **{cache_arg(model): cache})


def prefill(model: Any, ids: torch.Tensor) -> tuple[torch.Tensor, Any]:
    """Run the prompt; return the last position's logits ``[vocab]`` and the cache."""
    out = step(model, ids, None)
    cache = out.past_key_values if getattr(out, "cache", None) is None else out.cache
    return out.logits[0, -1], cache


def greedy(
    model: Any,
    first_logits: torch.Tensor,
    cache: Any,
    max_new_tokens: int,
    eos_token_id: int | None = None,
) -> list[int]:
    """Greedy tokens from a prefilled ``cache`` whose last logits are ``first_logits``.

    The same loop ``generate(do_sample=False)`` runs (argmax, feed back one token), so with
    an untouched cache it yields the model's own greedy tokens; with an edited cache it shows
    what the edit changed. Stops after EOS (kept) or ``max_new_tokens``.
    """
    tokens: list[int] = []
    logits = first_logits
    device = first_logits.device
    for _ in range(max_new_tokens):
        token = int(torch.argmax(logits))
        tokens.append(token)
        if eos_token_id is not None and token == eos_token_id:
            break
        if len(tokens) == max_new_tokens:
            break
        out = step(model, torch.tensor([[token]], device=device), cache)
        logits = out.logits[0, -1]
    return tokens


def teacher_forced_agreement(
    model: Any, first_logits: torch.Tensor, cache: Any, reference: Sequence[int]
) -> float:
    """Share of positions where the edited cache's argmax equals the reference greedy token,
    feeding the *reference* tokens (so one early miss does not doom the rest)."""
    if not reference:
        return 1.0
    hits = int(int(torch.argmax(first_logits)) == reference[0])
    if len(reference) > 1:
        ids = torch.tensor([list(reference[:-1])], device=first_logits.device)
        logits = step(model, ids, cache).logits[0]
        preds = torch.argmax(logits, dim=-1).tolist()
        hits += sum(int(p == r) for p, r in zip(preds, reference[1:], strict=True))
    return hits / len(reference)


def prefix_agreement(tokens: Sequence[int], reference: Sequence[int]) -> float:
    """Length of the common prefix over the reference length (free-running agreement)."""
    if not reference:
        return 1.0
    n = 0
    for a, b in zip(tokens, reference, strict=False):
        if a != b:
            break
        n += 1
    return n / len(reference)


@dataclass
class KVRun:
    """What a KV method reports for one prompt: the tokens it decoded and the memory it kept.

    ``kv_bytes`` is the method's resident KV (factors, codes or kept tokens) at its peak;
    ``kv_bytes_full`` is what the unmodified model keeps for the same run. ``agreement`` and
    ``exact`` compare with the unmodified model's greedy tokens when a reference was run.
    """

    tokens: list[int]
    text: str
    prompt_tokens: int
    kv_bytes: int
    kv_bytes_full: int
    agreement: float | None = None
    exact: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ratio(self) -> float:
        """Compression ratio (full bytes / kept bytes)."""
        return self.kv_bytes_full / self.kv_bytes if self.kv_bytes else float("inf")

    def metadata(self) -> dict[str, Any]:
        """Flat, JSON-safe numbers for ``ModelOutput.metadata['kv']``."""
        meta: dict[str, Any] = {
            "kv_bytes": self.kv_bytes,
            "kv_bytes_full": self.kv_bytes_full,
            "kv_ratio": self.ratio,
            "prompt_tokens": self.prompt_tokens,
            "output_tokens": len(self.tokens),
        }
        if self.agreement is not None:
            meta["agreement"] = self.agreement
        if self.exact is not None:
            meta["exact"] = self.exact
        meta.update(self.extra)
        return meta


def force_logits(logits: torch.Tensor, answers: Sequence[Sequence[int]], done: Sequence[int],
                 eos: int) -> torch.Tensor:
    """One-hot logits that make any sampler emit ``answers[row][done[row]]`` (EOS after the
    end): how a method that decoded on its own (a tree search, another model) hands its
    tokens to the ``whitebox/`` loop."""
    forced = torch.full_like(logits, -float("inf"))
    for row, (answer, i) in enumerate(zip(answers, done, strict=True)):
        forced[row, answer[i] if i < len(answer) else eos] = 0.0
    return forced


def flag(value: Any) -> bool:
    """A boolean option that may arrive as text from ``-M key=value`` ("false", "0", "no")."""
    if isinstance(value, str):
        return value.strip().lower() not in ("false", "0", "no", "off", "")
    return bool(value)
