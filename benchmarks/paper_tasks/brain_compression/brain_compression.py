"""Brain alignment under compression, the testable part: quantised and pruned copies of
SmolLM2-135M against the uncompressed model, on minimal pairs and on representational
similarity to the uncompressed model. Brain predictivity itself is NOT measured: no fMRI
data can be had offline.

Oota et al., "Linguistic properties and model scale in brain encoding: from small to
compressed language models", ICML 2026, arXiv:2602.07547 (abstract in
``../shared/papers/002_e86105e30cf4b5e8.txt``): quantisation and pruning mostly preserve
fMRI predictivity while degrading linguistic probes (discourse, syntax, morphology). Each
sample is a cell (seed, scheme): the seed draws the probe set (templated minimal pairs of
four phenomena from ``environments/brain_compression`` and windows of the ``pydoc``
corpus); the scheme (``rtn<bits>``, ``prune<fraction>``) compresses every linear weight of
the blocks. The method (``compressed``) and the baseline (``full``) are read out on the
same probes; scored by minimal-pair accuracy (overall and per phenomenon), next-token NLL
on the windows, and linear CKA / RSA of the mean-pooled hidden states to the uncompressed
model's at five depths.

    inspect eval harness/brain_compression --model none
    inspect eval harness/brain_compression --model none -T schemes=prune0.5 -T n_seeds=1
    harness study run methods/studies/brain_compression/study.yaml
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np
from inspect_ai import Task, task
from inspect_ai.dataset import Sample

from environments.brain_compression import PHENOMENA, linear_cka, minimal_pairs, rsa
from harness.method_tasks import cell_sample, method_task, resolve_method
from harness.plugins.benchmark import benchmark

DEFAULT_N_SEEDS = 3
DEFAULT_SEED = 0
DEFAULT_SCHEMES = "rtn8,rtn4,rtn3,prune0.3,prune0.5,prune0.7"
DEFAULT_N_PAIRS = 32
DEFAULT_N_WINDOWS = 48
DEFAULT_WINDOW = 32
DEFAULT_LAYERS = "6,12,18,24,30"
DEFAULT_METHOD = "compressed"
DEFAULT_BASELINE = "full"
FAMILY = "lm_compression"
VERSION = "1.0.0"


@functools.cache
def _tokenizer(path: str | None) -> Any:
    from transformers import AutoTokenizer

    from harness.models.whitebox import ensure_hf_copy

    return AutoTokenizer.from_pretrained(path or ensure_hf_copy(), local_files_only=True)


@functools.cache
def _corpus_ids(path: str | None) -> tuple[int, ...]:
    from harness.corpus import load_corpus

    return tuple(_tokenizer(path)(load_corpus("pydoc").held_out,
                                  add_special_tokens=False).input_ids)


@functools.cache
def _inputs(seed: int, n_pairs: int, n_windows: int, window: int, layers: tuple[int, ...],
            model: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    tok = _tokenizer(model)
    ctx = [int(tok.eos_token_id or 0)]
    pairs = minimal_pairs(n_pairs, seed)

    def ids(text: str) -> list[int]:
        return ctx + list(tok(text, add_special_tokens=False).input_ids)

    corpus = _corpus_ids(model)
    starts = np.sort(np.random.default_rng(seed).choice(len(corpus) - window, n_windows,
                                                        replace=False))
    inputs = {"pairs": [[ids(p.good), ids(p.bad)] for p in pairs],
              "sentences": [ctx + list(corpus[s:s + window]) for s in starts],
              "layers": list(layers), "model": model}
    reference = resolve_method(FAMILY, "full").load()(inputs, {}, seed)
    truth = {"phenomenon": np.array([p.phenomenon for p in pairs]), "reference": reference}
    return inputs, truth


class CompressionProblem:
    """Cells are (seed, scheme); the truth is the probes' phenomena and the uncompressed
    model's readouts on them."""

    def __init__(self, n_pairs: int, n_windows: int, window: int, layers: tuple[int, ...],
                 model: str | None) -> None:
        self.n_pairs, self.n_windows, self.window = n_pairs, n_windows, window
        self.layers, self.model = layers, model

    def prepare(self, cell: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
        return _inputs(int(cell["seed"]), self.n_pairs, self.n_windows, self.window,
                       self.layers, self.model)

    def score(self, outputs: Mapping[str, Any], truth: Any,
              cell: Mapping[str, Any]) -> dict[str, float]:
        ref = truth["reference"]
        correct = np.asarray(outputs["good_lp"]) > np.asarray(outputs["bad_lp"])
        margin = np.asarray(outputs["good_lp"]) - np.asarray(outputs["bad_lp"])
        ref_margin = np.asarray(ref["good_lp"]) - np.asarray(ref["bad_lp"])
        reps, ref_reps = np.asarray(outputs["reps"]), np.asarray(ref["reps"])
        ckas = [linear_cka(a, b) for a, b in zip(reps, ref_reps, strict=True)]
        rsas = [rsa(a, b) for a, b in zip(reps, ref_reps, strict=True)]
        out: dict[str, float] = {
            "loss": 1.0 - float(correct.mean()), "pair_acc": float(correct.mean()),
            "pair_agree": float((np.sign(margin) == np.sign(ref_margin)).mean()),
            "nll": float(outputs["nll"]), "nll_increase": float(outputs["nll"]) - ref["nll"],
            "cka": float(np.mean(ckas)), "cka_min": float(np.min(ckas)),
            "rsa": float(np.mean(rsas)), "sparsity": float(outputs["sparsity"]),
            "weight_error": float(outputs["weight_error"]), "bits": float(outputs["bits"]),
        }
        for name in PHENOMENA:
            rows = truth["phenomenon"] == name
            if rows.any():
                out[f"acc_{name}"] = float(correct[rows].mean())
        for layer, value in zip(self.layers, ckas, strict=True):
            out[f"cka_l{layer}"] = float(value)
        return out


def record_to_sample(record: Mapping[str, Any]) -> Sample:
    """A cell record (``{"seed": 0, "scheme": "prune0.5"}``) as a sample with a stable id."""
    seed, scheme = int(record["seed"]), str(record["scheme"])
    return cell_sample({"seed": seed, "scheme": scheme, "config": {"scheme": scheme}},
                       id=f"seed={seed},scheme={scheme}")


def _split(text: str | list[Any] | tuple[Any, ...]) -> list[str]:
    if isinstance(text, str):
        return [v.strip() for v in text.split(",") if v.strip()]
    return [str(v) for v in text]


@benchmark("brain_compression")
@task
def brain_compression(
    n_seeds: int = DEFAULT_N_SEEDS,
    seed: int = DEFAULT_SEED,
    schemes: str | list[str] = DEFAULT_SCHEMES,
    n_pairs: int = DEFAULT_N_PAIRS,
    n_windows: int = DEFAULT_N_WINDOWS,
    window: int = DEFAULT_WINDOW,
    layers: str = DEFAULT_LAYERS,
    model: str | None = None,
    method: str = DEFAULT_METHOD,
    baseline: str | None = DEFAULT_BASELINE,
) -> Task:
    """Compressed SmolLM2-135M vs the uncompressed model: minimal-pair accuracy, NLL, and
    CKA / RSA to the uncompressed model's representations (brain predictivity untested).

    Args:
        n_seeds: Probe sets (samples per scheme).
        seed: First probe set's seed.
        schemes: Compressions, comma-separated: ``rtn<bits>`` (group-wise round-to-
            nearest) or ``prune<fraction>`` (magnitude pruning).
        n_pairs: Minimal pairs per phenomenon (four phenomena).
        n_windows: Corpus windows (held-out ``pydoc``) for NLL and CKA / RSA.
        window: Tokens per window.
        layers: Hidden-state indices compared (0 = embeddings; SmolLM2-135M has 30 blocks).
        model: An HF folder instead of the ladder's SmolLM2-135M (tests use a tiny one).
        method: The plain method scored (``compressed`` or ``full``).
        baseline: Run on the same probes too (or ``none``).
    """
    cells = [{"seed": seed + i, "scheme": s} for i in range(n_seeds) for s in _split(schemes)]
    layer_ids = tuple(int(v) for v in _split(layers))
    return method_task(
        name="brain_compression", family=FAMILY,
        problem=CompressionProblem(n_pairs, n_windows, window, layer_ids, model),
        samples=[record_to_sample(c) for c in cells], method=method, baseline=baseline,
        version=VERSION, metadata={"paper": "2602.07547",
                                   "brain_predictivity": "untested (no fMRI data offline)"},
    )
