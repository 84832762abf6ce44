"""Compressed variants of SmolLM2-135M (the paper's compressed models) against the
uncompressed model, read out on minimal pairs and sentence representations.

The paper (brain alignment under compression, ICML 2026) compares full-precision models
with quantised and pruned copies by how well their features predict fMRI responses, and
probes their linguistic knowledge. Here a *scheme* names one compression of every linear
weight in the transformer blocks (embeddings, shared with the output head, stay as
they are):

* ``rtn<b>`` (e.g. ``rtn4``): symmetric round-to-nearest to ``b`` bits in groups of
  ``group`` input weights (one scale per group), the plain weight-only quantiser;
* ``prune<p>`` (e.g. ``prune0.5``): unstructured magnitude pruning, the fraction ``p`` of
  each matrix's smallest-magnitude weights set to zero;
* ``full``: no change (the baseline).

The "full" model is the ladder's SmolLM2-135M as shipped, Q4_1 dequantised to fp32
(:func:`harness.models.whitebox.ensure_hf_copy`): no higher-precision copy exists offline, so
every scheme compresses that.

Inputs: ``pairs`` (``[[good_ids, bad_ids], ...]``, each starting with one context token),
``sentences`` (id lists, same convention), ``layers`` (hidden-state indices; 0 is the
embeddings), optionally ``model`` (an HF folder; default the ladder's SmolLM2). Config:
``scheme``, ``group`` (32), ``batch`` (32), ``threads`` (1). Outputs: ``good_lp`` /
``bad_lp`` (summed log-probabilities of each sentence's tokens after the context token),
``reps`` (``[layers, sentences, d]``, hidden states mean-pooled over those tokens),
``nll`` (mean next-token NLL over ``sentences``), ``sparsity`` (zero share of the
compressed weights), ``weight_error`` (relative Frobenius error of them) and ``bits``
(stored bits per compressed weight, scales included). Results are memoised per (model,
scheme, inputs), so the uncompressed reference and the baseline cost one run.
"""

from __future__ import annotations

import hashlib
import pickle
import re
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

import numpy as np

from harness.plugins.plain_method import plain_method

FAMILY = "lm_compression"
_RESULTS: dict[str, dict[str, Any]] = {}


@cache
def _base(path: str | None) -> Any:
    if path is None:
        from harness.models.whitebox import WhiteBoxLM

        return WhiteBoxLM.load().model
    import torch
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(path, local_files_only=True,
                                                dtype=torch.float32).eval()


def quantise_rtn(w: Any, bits: int, group: int) -> Any:
    """Symmetric round-to-nearest of ``w`` ([out, in]) to ``bits`` bits per group of
    ``group`` consecutive input weights (the last group may be shorter)."""
    import torch

    out_dim, in_dim = w.shape
    pad = (-in_dim) % group
    x = torch.nn.functional.pad(w, (0, pad)).reshape(out_dim, -1, group)
    top = 2 ** (bits - 1) - 1
    scale = x.abs().amax(dim=-1, keepdim=True).clamp_min(1e-12) / top
    q = (x / scale).round().clamp(-top, top) * scale
    return q.reshape(out_dim, -1)[:, :in_dim]


def prune_magnitude(w: Any, fraction: float) -> Any:
    """``w`` with its ``fraction`` smallest-magnitude entries set to zero."""
    import torch

    n = int(round(fraction * w.numel()))
    if n <= 0:
        return w.clone()
    cut = w.abs().flatten().kthvalue(n).values
    return torch.where(w.abs() <= cut, torch.zeros_like(w), w)


def parse_scheme(scheme: str) -> tuple[str, float]:
    """``("full", 0)``, ``("rtn", bits)`` or ``("prune", fraction)`` from a scheme name."""
    if scheme == "full":
        return "full", 0.0
    found = re.fullmatch(r"(rtn|prune)([0-9.]+)", scheme)
    if not found:
        raise ValueError(f"unknown scheme {scheme!r}: full, rtn<bits> or prune<fraction>")
    kind, value = found.group(1), float(found.group(2))
    if kind == "rtn" and not 2 <= value <= 16:
        raise ValueError(f"rtn bits must be in 2..16, got {value:g}")
    if kind == "prune" and not 0 <= value < 1:
        raise ValueError(f"prune fraction must be in [0, 1), got {value:g}")
    return kind, value


def compress(model: Any, scheme: str, group: int = 32) -> tuple[Any, dict[str, float]]:
    """A compressed deep copy of ``model`` and its weight statistics."""
    import copy

    import torch

    kind, value = parse_scheme(scheme)
    out = copy.deepcopy(model)
    zeros = total = 0
    err = ref = 0.0
    with torch.no_grad():
        for module in out.model.layers.modules():
            if not isinstance(module, torch.nn.Linear):
                continue
            w = module.weight.data
            new = (quantise_rtn(w, int(value), group) if kind == "rtn"
                   else prune_magnitude(w, value) if kind == "prune" else w)
            err += float(((new - w) ** 2).sum())
            ref += float((w ** 2).sum())
            zeros += int((new == 0).sum())
            total += new.numel()
            module.weight.data = new
    bits = (value + 16.0 / group if kind == "rtn" else 32.0 * (1 - value) if kind == "prune"
            else 32.0)
    return out, {"sparsity": zeros / max(total, 1), "weight_error": (err / ref) ** 0.5,
                 "bits": bits}


def _batches(seqs: Sequence[Sequence[int]], size: int) -> list[list[int]]:
    order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
    return [order[i:i + size] for i in range(0, len(order), size)]


def read_out(model: Any, seqs: Sequence[Sequence[int]], layers: Sequence[int],
             batch: int = 32) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per sequence: summed log-probability and token count after the first token, and the
    hidden states at ``layers`` mean-pooled over those tokens (``[layers, n, d]``)."""
    import torch

    lp = np.zeros(len(seqs))
    count = np.zeros(len(seqs))
    reps = np.zeros((len(layers), len(seqs), int(model.config.hidden_size)), np.float32)
    with torch.inference_mode():
        for idx in _batches(seqs, batch):
            width = max(len(seqs[i]) for i in idx)
            ids = torch.zeros((len(idx), width), dtype=torch.long)
            mask = torch.zeros((len(idx), width), dtype=torch.long)
            for row, i in enumerate(idx):
                ids[row, :len(seqs[i])] = torch.tensor(list(seqs[i]))
                mask[row, :len(seqs[i])] = 1
            out = model(input_ids=ids, attention_mask=mask, output_hidden_states=True,
                        use_cache=False)
            logp = torch.log_softmax(out.logits[:, :-1].float(), dim=-1)
            tok = logp.gather(-1, ids[:, 1:, None])[..., 0] * mask[:, 1:]
            keep = mask.clone()
            keep[:, 0] = 0
            denom = keep.sum(1, keepdim=True).clamp_min(1)
            for row, i in enumerate(idx):
                lp[i] = float(tok[row].sum())
                count[i] = float(mask[row, 1:].sum())
            for j, layer in enumerate(layers):
                h = out.hidden_states[layer].float()
                pooled = (h * keep[..., None]).sum(1) / denom
                reps[j, idx] = pooled.numpy()
    return lp, count, reps


def _key(inputs: Mapping[str, Any], scheme: str, group: int) -> str:
    blob = pickle.dumps((inputs.get("model"), scheme, group, inputs["pairs"],
                         inputs["sentences"], list(inputs["layers"])))
    return hashlib.sha256(blob).hexdigest()


def run_scheme(inputs: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, Any]:
    """Compress (per ``config["scheme"]``), then read out pairs and sentences."""
    import torch

    scheme = str(config.get("scheme", "full"))
    group, batch = int(config.get("group", 32)), int(config.get("batch", 32))
    key = _key(inputs, scheme, group)
    if key in _RESULTS:
        return dict(_RESULTS[key])
    threads = torch.get_num_threads()
    torch.set_num_threads(int(config.get("threads", 1)))
    try:
        base = _base(inputs.get("model"))
        model, stats = compress(base, scheme, group) if scheme != "full" else (
            base, {"sparsity": 0.0, "weight_error": 0.0, "bits": 32.0})
        pairs = [(list(g), list(b)) for g, b in inputs["pairs"]]
        seqs = [g for g, _ in pairs] + [b for _, b in pairs]
        lp, _, _ = read_out(model, seqs, [0], batch)
        slp, scount, reps = read_out(model, [list(s) for s in inputs["sentences"]],
                                     list(inputs["layers"]), batch)
        result = {"good_lp": lp[:len(pairs)], "bad_lp": lp[len(pairs):], "reps": reps,
                  "nll": float(-slp.sum() / max(scount.sum(), 1)), "scheme": scheme, **stats}
        del model
    finally:
        torch.set_num_threads(threads)
    _RESULTS[key] = result
    return dict(result)


@plain_method("compressed", family=FAMILY, extra="cpu",
              summary="the LM compressed by the cell's scheme (rtn<bits> / prune<fraction>)")
def compressed(inputs: Mapping[str, Any], config: Mapping[str, Any],
               seed: int) -> dict[str, Any]:
    """The compressed model's readouts (the scheme comes from the cell's config)."""
    if str(config.get("scheme", "full")) == "full":
        raise ValueError("the compressed method needs a scheme other than full")
    return run_scheme(inputs, config)


@plain_method("full", family=FAMILY, extra="cpu", role="baseline",
              summary="the uncompressed LM (the ladder's SmolLM2-135M, fp32)")
def full(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """The uncompressed model's readouts (whatever scheme the cell names)."""
    return run_scheme(inputs, {**config, "scheme": "full"})
