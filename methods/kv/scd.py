"""SCD: a producer ships compact low-rank KV codes; a fine-tuned consumer rebuilds its cache.

Producer and consumer share SmolLM2's architecture; the consumer is a lightly fine-tuned
copy (:mod:`methods.kv.consumer`). Instead of prefilling the context itself, the consumer
receives, per layer, a truncated-SVD code of the producer's context:

* **reuse** layers (all but ``patch`` of them): the code of ``[keys before RoPE | values]``;
  the consumer uses the decoded keys/values as its own (RoPE re-applied);
* **patch** layers (``patch`` of them, evenly spaced from layer 0): the code of the
  producer's residual stream entering that layer; the consumer normalises it with its *own*
  input norm and recomputes keys/values with its *own* projections, so the consumer's
  weights enter the cache there and the producer/consumer mismatch does not pile up.

The consumer then runs the prompt's last token on the rebuilt cache and decodes greedily.
Time-to-first-token is a bandwidth model, stated here and reported with every request:
``TTFT_scd = code_bytes / bandwidth + FLOPs(patch projections + one token) / compute`` vs
``TTFT_prefill = FLOPs(consumer prefill) / compute`` with FLOPs ~ 2 x parameters x tokens
(projections: 2 x tokens x hidden x kv_width per patch layer); defaults 10 Gbit/s and
50 GFLOP/s (a CPU link and core). ``rank`` none sends codes at full rank (lossless);
with ``consumer=base`` and no patch layers SCD is then exactly the producer (tested).

    inspect eval harness/passkey --model whitebox/smollm2-135m -M method=scd -M rank=32
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from harness.models.hooks import Method, RequestState, StepView, whitebox_method
from methods.kv.cache import (
    KVRun,
    LayerKV,
    flag,
    force_logits,
    full_kv_bytes,
    greedy,
    layers_of,
    make_cache,
    prefix_agreement,
    rope,
    rope_tables,
    step,
    teacher_forced_agreement,
    unrope,
)
from methods.kv.xkv import _flat, _unflat, factorize

_CONSUMERS: dict[str, Any] = {}


def patch_layers(n_layers: int, patch: int) -> list[int]:
    """``patch`` evenly spaced layer indices starting at 0 (none when ``patch == 0``)."""
    patch = max(0, min(patch, n_layers))
    return sorted({round(i * n_layers / patch) for i in range(patch)}) if patch else []


def load_consumer(kind: str, seed: int, steps: int) -> Any:
    """The consumer model (``base`` means the producer itself; handled by the caller)."""
    from harness.models.whitebox import WhiteBoxLM
    from methods.kv.consumer import ensure_consumer

    key = f"{kind}:{seed}:{steps}"
    if key not in _CONSUMERS:
        _CONSUMERS[key] = WhiteBoxLM.load(ensure_consumer(seed, steps))
    return _CONSUMERS[key]


def rebuild(
    consumer: Any,
    producer_kv: Sequence[LayerKV],
    hidden: dict[int, torch.Tensor],
    rank: int | None,
) -> tuple[list[LayerKV], int]:
    """The consumer's cache from the producer's context (``[1, heads, T, d]`` per layer and
    the residual ``[T, hidden]`` at patch layers); returns the layers and the code bytes."""
    tokens = int(producer_kv[0][0].shape[2])
    heads = int(producer_kv[0][0].shape[1])
    cos, sin = rope_tables(consumer, torch.arange(tokens, device=producer_kv[0][0].device))
    out: list[LayerKV] = []
    sent = 0
    for i, (k, v) in enumerate(producer_kv):
        if i in hidden:
            code = factorize(hidden[i], rank, 1.0)
            layer = consumer.model.layers[i]
            with torch.inference_mode():
                x = layer.input_layernorm(code.dense().unsqueeze(0))
                nk = layer.self_attn.k_proj(x)[0]
                nv = layer.self_attn.v_proj(x)[0]
            out.append((rope(_unflat(nk, heads), cos, sin), _unflat(nv, heads)))
        else:
            joint = torch.cat([_flat(unrope(k, cos, sin)), _flat(v)], dim=1)
            code = factorize(joint, rank, 1.0)
            dense = code.dense()
            half = dense.shape[1] // 2
            out.append((rope(_unflat(dense[:, :half], heads), cos, sin),
                        _unflat(dense[:, half:], heads)))
        sent += code.nbytes
    return out, sent


def ttft_model(
    config: Any, prompt_tokens: int, code_bytes: int, n_patch: int,
    n_params: int, bandwidth_gbps: float, compute_gflops: float,
) -> dict[str, float]:
    """Seconds to first token for SCD and for a consumer prefill under the stated model."""
    compute = compute_gflops * 1e9
    kv_width = 2 * int(config.num_key_value_heads) * int(
        getattr(config, "head_dim", config.hidden_size // config.num_attention_heads))
    patch_flops = n_patch * 2 * prompt_tokens * int(config.hidden_size) * kv_width
    scd = code_bytes * 8 / (bandwidth_gbps * 1e9) + (patch_flops + 2 * n_params) / compute
    prefill = 2 * n_params * prompt_tokens / compute
    return {"ttft_scd_ms": 1e3 * scd, "ttft_prefill_ms": 1e3 * prefill,
            "ttft_speedup": prefill / scd if scd else 0.0}


@whitebox_method("scd")
class SCD(Method):
    """``-M method=scd``: producer codes -> consumer cache (see module doc).

    Options: ``rank`` (code rank; none = lossless), ``patch`` (number of patch layers),
    ``consumer`` (``finetuned`` or ``base``), ``seed``/``steps`` (which consumer),
    ``bandwidth_gbps``, ``compute_gflops`` (the TTFT model), ``max_tokens``, ``reference``
    (also run the consumer's own prefill and report agreement with its greedy tokens).
    """

    name = "scd"

    def __init__(
        self,
        rank: int | str | None = None,
        patch: int = 2,
        consumer: str = "finetuned",
        seed: int = 0,
        steps: int = 6,
        bandwidth_gbps: float = 10.0,
        compute_gflops: float = 50.0,
        max_tokens: int = 32,
        reference: bool = True,
    ) -> None:
        self.rank = None if rank in (None, "none", "full", "") else int(rank)  # type: ignore[arg-type]
        self.patch = int(patch)
        if consumer not in ("finetuned", "base"):
            raise ValueError("consumer must be 'finetuned' or 'base'")
        self.consumer_kind, self.seed, self.steps = consumer, int(seed), int(steps)
        self.bandwidth_gbps, self.compute_gflops = float(bandwidth_gbps), float(compute_gflops)
        self.max_tokens, self.reference = int(max_tokens), flag(reference)
        self._patch: list[int] = []

    def start(self, lm: Any, states: Sequence[RequestState]) -> None:
        """Ask the loop for the residual stream entering each patch layer."""
        self._patch = patch_layers(lm.n_layers, self.patch)
        self.hidden_layers = tuple(self._patch)

    def after_prefill(self, lm: Any, view: StepView, states: Sequence[RequestState]) -> Any:
        """Per row: code the producer's context, rebuild on the consumer, decode there."""
        consumer = lm if self.consumer_kind == "base" else load_consumer(
            self.consumer_kind, self.seed, self.steps)
        eos = int(lm.tokenizer.eos_token_id)
        layers = layers_of(view.cache)
        mask = view.attention_mask
        n_params = sum(p.numel() for p in consumer.model.parameters())
        for state in states:
            b = state.index
            start = int(mask.shape[1] - mask[b].sum())
            ids = view.input_ids[b : b + 1, start:]
            context = [(k[b : b + 1, :, start:-1], v[b : b + 1, :, start:-1]) for k, v in layers]
            hidden = {i: view.hidden[i][b, start:-1].float() for i in self._patch}
            rebuilt, sent = rebuild(consumer.model, context, hidden, self.rank)
            cache = make_cache(rebuilt)
            first = step(consumer.model, ids[:, -1:], cache).logits[0, -1].float()
            tf_cache = make_cache(layers_of(cache)) if self.reference else None
            tokens = greedy(consumer.model, first, cache, self.max_tokens, eos)
            prompt = int(ids.shape[1])
            run = KVRun(tokens, "", prompt, sent, full_kv_bytes(lm.model.config, prompt - 1))
            run.extra = {"code_bytes": sent, "patch_layers": len(self._patch),
                         "rank": -1 if self.rank is None else self.rank,
                         **ttft_model(lm.model.config, prompt, sent, len(self._patch), n_params,
                                      self.bandwidth_gbps, self.compute_gflops)}
            if self.reference and tf_cache is not None:
                logits, full = _prefill(consumer.model, ids)
                ref = greedy(consumer.model, logits, full, self.max_tokens, eos)
                run.exact = ref == tokens
                run.agreement = teacher_forced_agreement(consumer.model, first, tf_cache, ref)
                run.extra["prefix_agreement"] = prefix_agreement(tokens, ref)
            state.data["scd"] = tokens
            state.data["metadata"] = {"kv": run.metadata()}
        return None

    def process_logits(
        self, lm: Any, logits: Any, view: StepView, states: Sequence[RequestState]
    ) -> Any:
        """Emit the consumer's tokens through the loop."""
        answers = [state.data.get("scd", []) for state in states]
        done = [len(state.tokens) for state in states]
        return force_logits(logits, answers, done, int(lm.tokenizer.eos_token_id))


def _prefill(model: Any, ids: torch.Tensor) -> tuple[torch.Tensor, Any]:
    from methods.kv.cache import prefill

    logits, cache = prefill(model, ids)
    return logits.float(), cache
