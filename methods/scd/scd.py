"""SCD: a producer ships compact low-rank KV codes; a fine-tuned consumer rebuilds its cache.

Producer and consumer share SmolLM2's architecture; the consumer is a lightly fine-tuned
copy (:mod:`methods.scd.consumer`). Instead of prefilling the context itself, the consumer
receives, per layer, a truncated-SVD code of the producer's context:

* **reuse** layers (all but ``patch`` of them): the code of ``[keys before RoPE | values]``;
  the consumer uses the decoded keys/values as its own (RoPE re-applied);
* **patch** layers (``patch`` of them, evenly spaced from layer 0): the code of the
  producer's residual stream entering that layer; the consumer normalises it with its *own*
  input norm and recomputes keys/values with its *own* projections, so the consumer's
  weights enter the cache there and the producer/consumer mismatch does not pile up
  (``predictor=residual``). With ``predictor=learned`` no residual code is shipped: the
  normalised input is predicted from the shipped KV codes of layers ``L-1..L+1`` by a small
  map trained once under a loss bound (:mod:`methods.scd.scd_predictor`).

The consumer then runs the prompt's last token on the rebuilt cache and decodes greedily.
Time-to-first-token is a bandwidth model, stated here and reported with every request:
``TTFT_scd = code_bytes / bandwidth + FLOPs(patch projections + one token) / compute`` vs
``TTFT_prefill = FLOPs(consumer prefill) / compute`` with FLOPs ~ 2 x parameters x tokens
(projections: 2 x tokens x hidden x kv_width per patch layer); defaults 10 Gbit/s and
50 GFLOP/s (a CPU link and core). ``rank`` none sends codes at full rank (lossless);
with ``consumer=base`` and no patch layers SCD is then exactly the producer (tested).

    inspect eval harness/passkey --model whitebox/smollm2-135m -M method=scd -M rank=32
    inspect eval harness/passkey --model whitebox/smollm2-135m -M method=scd -M rank=32 \
        -M predictor=learned
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from harness.plugins.whitebox_method import Method, RequestState, StepView, whitebox_method
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
)
from methods.scd.scd_predictor import (
    DEFAULT_EPSILON,
    DEFAULT_PREDICTOR_RANK,
    LayerPredictor,
    decoded_code,
    features,
    patch_layers,
)
from methods.xkv.xkv import _unflat, factorize, reference_tokens

_CONSUMERS: dict[str, Any] = {}
_PREDICTORS: dict[str, dict[int, LayerPredictor]] = {}


def load_consumer(kind: str, seed: int, steps: int) -> Any:
    """The consumer model (``base`` means the producer itself; handled by the caller)."""
    from harness.models.whitebox import WhiteBoxLM
    from methods.scd.consumer import ensure_consumer

    key = f"{kind}:{seed}:{steps}"
    if key not in _CONSUMERS:
        _CONSUMERS[key] = WhiteBoxLM.load(ensure_consumer(seed, steps))
    return _CONSUMERS[key]


def rebuild(
    consumer: Any,
    producer_kv: Sequence[LayerKV],
    hidden: dict[int, torch.Tensor],
    rank: int | None,
    predictors: Mapping[int, LayerPredictor] | None = None,
) -> tuple[list[LayerKV], int]:
    """The consumer's cache from the producer's context (``[1, heads, T, d]`` per layer and
    the residual ``[T, hidden]`` at residual-code patch layers); returns the layers and the
    code bytes. ``predictors`` (learned patch) replace their layers' reused keys/values with
    the consumer's projections of the normalised input predicted from the shipped KV codes
    (no extra bytes: those layers' codes are shipped as for reuse)."""
    tokens = int(producer_kv[0][0].shape[2])
    heads = int(producer_kv[0][0].shape[1])
    cos, sin = rope_tables(consumer, torch.arange(tokens, device=producer_kv[0][0].device))
    out: list[LayerKV] = []
    decoded: dict[int, torch.Tensor] = {}
    sent = 0
    for i, (k, v) in enumerate(producer_kv):
        if i in hidden:
            code = factorize(hidden[i], rank, 1.0)
            nk, nv = _project(consumer, i, code.dense())
            out.append((rope(_unflat(nk, heads), cos, sin), _unflat(nv, heads)))
            sent += code.nbytes
        else:
            dense, nbytes = decoded_code(k, v, cos, sin, rank)
            decoded[i] = dense
            half = dense.shape[1] // 2
            out.append((rope(_unflat(dense[:, :half], heads), cos, sin),
                        _unflat(dense[:, half:], heads)))
            sent += nbytes
    for layer, predictor in (predictors or {}).items():
        if layer in hidden or any(s in hidden for s in predictor.sources):
            raise ValueError("a learned patch layer reads KV codes, not residual codes")
        nk, nv = _project(consumer, layer, predictor(features(decoded, predictor.sources)),
                          normalised=True)
        out[layer] = (rope(_unflat(nk.to(out[layer][0].dtype), heads), cos, sin),
                      _unflat(nv.to(out[layer][1].dtype), heads))
    return out, sent


def _project(consumer: Any, layer: int, x: torch.Tensor,
             normalised: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """The consumer's own keys (pre-RoPE) and values ``[T, kv_width]`` at ``layer`` from a
    residual ``x [T, hidden]`` (``normalised``: ``x`` is already the norm's output)."""
    block = consumer.model.layers[layer]
    with torch.inference_mode():
        h = x.unsqueeze(0) if normalised else block.input_layernorm(x.unsqueeze(0))
        return block.self_attn.k_proj(h)[0], block.self_attn.v_proj(h)[0]


def ttft_model(
    config: Any, prompt_tokens: int, code_bytes: int, n_patch: int,
    n_params: int, bandwidth_gbps: float, compute_gflops: float, extra_flops: float = 0.0,
) -> dict[str, float]:
    """Seconds to first token for SCD and for a consumer prefill under the stated model
    (``extra_flops``: consumer-side work besides the patch projections, e.g. predictors)."""
    compute = compute_gflops * 1e9
    kv_width = 2 * int(config.num_key_value_heads) * int(
        getattr(config, "head_dim", config.hidden_size // config.num_attention_heads))
    patch_flops = n_patch * 2 * prompt_tokens * int(config.hidden_size) * kv_width
    scd = (code_bytes * 8 / (bandwidth_gbps * 1e9)
           + (patch_flops + extra_flops + 2 * n_params) / compute)
    prefill = 2 * n_params * prompt_tokens / compute
    return {"ttft_scd_ms": 1e3 * scd, "ttft_prefill_ms": 1e3 * prefill,
            "ttft_speedup": prefill / scd if scd else 0.0}


@whitebox_method("scd")
class SCD(Method):
    """``-M method=scd``: producer codes -> consumer cache (see module doc).

    Options: ``rank`` (code rank; none = lossless), ``patch`` (number of patch layers),
    ``predictor`` (how patch layers get their input: ``residual`` = a shipped code of the
    producer's residual stream, ``learned`` = predicted from the shipped KV codes by
    :mod:`methods.scd.scd_predictor`, no extra bytes), ``predictor_rank`` / ``epsilon``
    (the learned predictor's rank and loss bound), ``consumer`` (``finetuned`` or
    ``base``), ``seed``/``steps`` (which consumer), ``bandwidth_gbps``, ``compute_gflops``
    (the TTFT model), ``max_tokens``, ``reference`` (also run the consumer's own prefill and
    report agreement with its greedy tokens; memoised per prompt within a process).
    """

    name = "scd"

    def __init__(
        self,
        rank: int | str | None = None,
        patch: int = 2,
        predictor: str = "residual",
        predictor_rank: int = DEFAULT_PREDICTOR_RANK,
        epsilon: float = DEFAULT_EPSILON,
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
        if predictor not in ("residual", "learned"):
            raise ValueError("predictor must be 'residual' or 'learned'")
        if consumer not in ("finetuned", "base"):
            raise ValueError("consumer must be 'finetuned' or 'base'")
        self.predictor, self.predictor_rank, self.epsilon = (
            predictor, int(predictor_rank), float(epsilon))
        self.consumer_kind, self.seed, self.steps = consumer, int(seed), int(steps)
        self.bandwidth_gbps, self.compute_gflops = float(bandwidth_gbps), float(compute_gflops)
        self.max_tokens, self.reference = int(max_tokens), flag(reference)
        self._patch: list[int] = []

    def start(self, lm: Any, states: Sequence[RequestState]) -> None:
        """Ask the loop for the residual stream entering each residual-code patch layer."""
        self._patch = patch_layers(lm.n_layers, self.patch)
        self.hidden_layers = tuple(self._patch) if self.predictor == "residual" else ()

    def predictors(self, lm: Any, consumer: Any) -> dict[int, LayerPredictor]:
        """The learned patch predictors for this consumer (trained once, then cached)."""
        if self.predictor != "learned" or not self._patch:
            return {}
        from harness.models.whitebox import ensure_hf_copy
        from methods.scd.consumer import ensure_consumer
        from methods.scd.scd_predictor import ensure_predictor

        folder = (ensure_hf_copy() if self.consumer_kind == "base"
                  else ensure_consumer(self.seed, self.steps))
        key = f"{folder}:{self._patch}:{self.predictor_rank}:{self.epsilon}"
        if key not in _PREDICTORS:
            _PREDICTORS[key] = ensure_predictor(lm.model, consumer, folder, self._patch,
                                                rank=self.predictor_rank,
                                                epsilon=self.epsilon)
        return _PREDICTORS[key]

    def after_prefill(self, lm: Any, view: StepView, states: Sequence[RequestState]) -> Any:
        """Per row: code the producer's context, rebuild on the consumer, decode there."""
        consumer = lm if self.consumer_kind == "base" else load_consumer(
            self.consumer_kind, self.seed, self.steps)
        predictors = self.predictors(lm, consumer)
        eos = int(lm.tokenizer.eos_token_id)
        layers = layers_of(view.cache)
        mask = view.attention_mask
        n_params = sum(p.numel() for p in consumer.model.parameters())
        for state in states:
            b = state.index
            start = int(mask.shape[1] - mask[b].sum())
            ids = view.input_ids[b : b + 1, start:]
            context = [(k[b : b + 1, :, start:-1], v[b : b + 1, :, start:-1]) for k, v in layers]
            hidden = {i: view.hidden[i][b, start:-1].float() for i in self.hidden_layers}
            rebuilt, sent = rebuild(consumer.model, context, hidden, self.rank, predictors)
            cache = make_cache(rebuilt)
            first = step(consumer.model, ids[:, -1:], cache).logits[0, -1].float()
            tf_cache = make_cache(layers_of(cache)) if self.reference else None
            tokens = greedy(consumer.model, first, cache, self.max_tokens, eos)
            prompt = int(ids.shape[1])
            predictor_flops = sum(2 * (prompt - 1) * (p.down.numel() + p.up.numel())
                                  for p in predictors.values())
            run = KVRun(tokens, "", prompt, sent, full_kv_bytes(lm.model.config, prompt - 1))
            run.extra = {"code_bytes": sent, "patch_layers": len(self._patch),
                         "learned_patch": int(bool(predictors)),
                         "rank": -1 if self.rank is None else self.rank,
                         **ttft_model(lm.model.config, prompt, sent, len(self._patch), n_params,
                                      self.bandwidth_gbps, self.compute_gflops,
                                      predictor_flops)}
            if self.reference and tf_cache is not None:
                ref = reference_tokens(consumer.model, tuple(ids[0].tolist()), self.max_tokens,
                                       functools.partial(_reference, consumer.model, ids,
                                                         self.max_tokens, eos))
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


def _reference(model: Any, ids: torch.Tensor, max_tokens: int, eos: int) -> list[int]:
    """The consumer's own greedy tokens after a full prefill of ``ids`` (the oracle)."""
    logits, full = _prefill(model, ids)
    return greedy(model, logits, full, max_tokens, eos)


def _prefill(model: Any, ids: torch.Tensor) -> tuple[torch.Tensor, Any]:
    from methods.kv.cache import prefill

    logits, cache = prefill(model, ids)
    return logits.float(), cache
