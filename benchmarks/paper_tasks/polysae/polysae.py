"""PolySAE: a TopK sparse autoencoder's decoder with low-rank pairwise and triple terms, vs
the TopK SAE, on SmolLM2-135M's middle-layer residual stream.

Koromilas et al., "PolySAE: Modeling Feature Interactions in Sparse Autoencoders via
Polynomial Decoding", ICML 2026, arXiv:2602.01322 (abstract in
``../shared/papers/000_99dd560bee28bcfd.txt``). Each sample is one seed: both SAEs (same
encoder, dictionary size ``m``, L0 ``k``) are trained on the same activations (the
``pydoc`` corpus through SmolLM2-135M, block 15 of 30; ``benchmarks/paper_tasks/polysae/
activations.py``) and scored on held-out windows: FVU, the parameter overhead over a TopK
SAE, probing F1 on templated compositional concepts whose controls hold the same words
(``environments/polysae``), and Pearson's r of per-pair quantities with co-occurrence (the
interaction weights for PolySAE; the code covariance for both). ``-T data=synthetic`` runs
on a synthetic activation model with known compositions instead (seconds; no model).

    inspect eval harness/polysae --model none
    inspect eval harness/polysae --model none -T data=synthetic -T n_seeds=3
    harness study run methods/studies/polysae/study.yaml
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np
from inspect_ai import Task, task
from inspect_ai.dataset import Sample

from environments.polysae import (
    CONCEPTS,
    cooccurrence,
    cv_f1,
    fvu,
    pair_correlation,
    probe_sentences,
    synthetic_activations,
    topk_param_count,
)
from harness.method_tasks import cell_sample, method_task
from harness.plugins.benchmark import benchmark

DEFAULT_N_SEEDS = 5
DEFAULT_SEED = 100
DEFAULT_DATA = "smollm2"
DEFAULT_N_WINDOWS = 128
DEFAULT_WINDOW = 64
DEFAULT_LAYER = 15
DEFAULT_N_PER_CLASS = 24
DEFAULT_M = 1024
DEFAULT_K = 32
DEFAULT_RANK = 32
DEFAULT_STEPS = 1200
DEFAULT_METHOD = "polysae"
DEFAULT_BASELINE = "topk-sae"
DATA_SEED = 0
"""Fixes the train/test split of windows and the probe sentences (not the SAEs' seed)."""
TOP_FEATURES = 256
"""Pairs of the most often active latents enter the co-occurrence correlations."""
FAMILY = "sae_activations"
VERSION = "1.0.0"


@functools.cache
def _smollm2(n_windows: int, window: int, layer: int,
             n_per_class: int) -> tuple[dict[str, Any], dict[str, Any]]:
    from benchmarks.paper_tasks.polysae.activations import (
        corpus_activations,
        sentence_activations,
    )

    windows = corpus_activations(n_windows, window, layer)
    order = np.random.default_rng(DATA_SEED).permutation(len(windows))
    n_test = max(len(windows) // 5, 1)
    train = np.concatenate([windows[i] for i in order[n_test:]])
    test = np.concatenate([windows[i] for i in order[:n_test]])
    scale = np.sqrt(train.shape[1]) / float(np.linalg.norm(train, axis=1).mean())
    sentences = probe_sentences(n_per_class, DATA_SEED)
    acts = sentence_activations(tuple(s.text for s in sentences), layer)
    probes = [(a * scale).astype(np.float32) for a in acts]
    truth = {"test": (test * scale).astype(np.float32),
             "concept": np.array([s.concept for s in sentences]),
             "label": np.array([s.label for s in sentences]),
             "kind": {c.name: c.kind for c in CONCEPTS},
             "raw": np.stack([p.max(0) for p in probes])}
    inputs = {"train": (train * scale).astype(np.float32), "test": truth["test"],
              "probes": probes}
    return inputs, truth


@functools.cache
def _synthetic(seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    data = synthetic_activations(seed, n_train=4000, n_test=1000, strength=4.0,
                                 p_pair=0.3)
    return {"train": data.train, "test": data.test}, {"test": data.test}


def _probe_scores(codes: np.ndarray, truth: Mapping[str, Any], seed: int,
                  prefix: str = "") -> dict[str, float]:
    per: dict[str, float] = {}
    for name in np.unique(truth["concept"]):
        rows = truth["concept"] == name
        per[str(name)] = cv_f1(codes[rows], truth["label"][rows], seed)
    out = {f"{prefix}probe_f1": float(np.mean(list(per.values())))}
    for kind in ("binding", "compound"):
        vals = [v for k, v in per.items() if truth["kind"][k] == kind]
        if vals:
            out[f"{prefix}probe_f1_{kind}"] = float(np.mean(vals))
    return out


class SAEProblem:
    """Cells are seeds; the truth is the held-out activations and the probe labels."""

    def __init__(self, data: str, n_windows: int, window: int, layer: int,
                 n_per_class: int) -> None:
        if data not in ("smollm2", "synthetic"):
            raise ValueError(f"data must be smollm2 or synthetic, got {data!r}")
        self.data, self.n_windows, self.window = data, n_windows, window
        self.layer, self.n_per_class = layer, n_per_class

    def prepare(self, cell: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
        if self.data == "synthetic":
            return _synthetic(DATA_SEED)
        return _smollm2(self.n_windows, self.window, self.layer, self.n_per_class)

    def score(self, outputs: Mapping[str, Any], truth: Any,
              cell: Mapping[str, Any]) -> dict[str, float]:
        test = truth["test"]
        m = int(outputs["m"])
        idx, val = np.asarray(outputs["test_idx"]), np.asarray(outputs["test_val"])
        codes = np.zeros((len(test), m), dtype=np.float64)
        np.put_along_axis(codes, idx, val, axis=1)
        active = codes > 0
        top = np.argsort(-active.sum(0), kind="stable")[:min(TOP_FEATURES, m)]
        cooc = cooccurrence(active[:, top])
        local = np.arange(len(top))
        out: dict[str, float] = {
            "fvu": fvu(test, outputs["recon"]), "l0": float(active.sum(1).mean()),
            "n_params": float(outputs["n_params"]),
            "param_overhead": float(outputs["n_params"]) / topk_param_count(test.shape[1], m)
            - 1.0,
            "dead_frac": float(outputs["dead_frac"]),
            "cov_cooc_r": pair_correlation(np.cov(codes[:, top], rowvar=False), cooc, local),
        }
        if "interaction" in outputs:
            inter = np.asarray(outputs["interaction"])[np.ix_(top, top)]
            out["interaction_cooc_r"] = pair_correlation(inter, cooc, local)
        seed = int(cell.get("seed", 0))
        if "label" in truth and len(outputs.get("probe_codes", [])):
            out.update(_probe_scores(np.asarray(outputs["probe_codes"]), truth, seed))
            out.update(_probe_scores(truth["raw"], truth, seed, prefix="raw_"))
            out["loss"] = 1.0 - out["probe_f1"]
        else:
            out["loss"] = out["fvu"]
        return out


def record_to_sample(record: Mapping[str, Any]) -> Sample:
    """A cell record (``{"seed": 100}``) as a sample with a stable id."""
    return cell_sample({"seed": int(record["seed"])})


@benchmark("polysae")
@task
def polysae(
    n_seeds: int = DEFAULT_N_SEEDS,
    seed: int = DEFAULT_SEED,
    data: str = DEFAULT_DATA,
    n_windows: int = DEFAULT_N_WINDOWS,
    window: int = DEFAULT_WINDOW,
    layer: int = DEFAULT_LAYER,
    n_per_class: int = DEFAULT_N_PER_CLASS,
    m: int = DEFAULT_M,
    k: int = DEFAULT_K,
    rank: int = DEFAULT_RANK,
    steps: int = DEFAULT_STEPS,
    method: str = DEFAULT_METHOD,
    baseline: str | None = DEFAULT_BASELINE,
    scale: float = 1.0,
) -> Task:
    """PolySAE vs a TopK SAE: FVU, parameter overhead, compositional probing F1, and the
    correlation of interaction weights (and code covariance) with co-occurrence.

    Args:
        n_seeds: SAE seeds (samples); the activations are the same for all.
        seed: First seed.
        data: ``smollm2`` (SmolLM2-135M activations) or ``synthetic`` (known compositions;
            the synthetic model's own sizes: d 32, m 64, k 8, rank 8, lr 3e-3 unless
            m, k or rank are given).
        n_windows: Corpus windows (a fifth held out for FVU and co-occurrence).
        window: Tokens per window.
        layer: Blocks run before the residual stream is read (15 of 30 is the middle).
        n_per_class: Probe sentences per class per concept.
        m: Dictionary size (both SAEs).
        k: Active latents per token, the L0 (both SAEs).
        rank: PolySAE's shared projection rank.
        steps: Adam steps of 256 tokens (both SAEs).
        method: The plain method scored (``polysae`` or ``topk-sae``).
        baseline: Run on the same data too (or ``none``).
        scale: Multiplies the training steps (the size factor shared by method tasks).
    """
    config: dict[str, Any] = {"m": m, "k": k, "rank": rank,
                                "steps": max(int(round(steps * scale)), 1)}
    if data == "synthetic" and (m, k, rank) == (DEFAULT_M, DEFAULT_K, DEFAULT_RANK):
        config.update(m=64, k=8, rank=8, lr=3e-3)  # the synthetic model's sizes
    return method_task(
        name="polysae", family=FAMILY,
        problem=SAEProblem(data, n_windows, window, layer, n_per_class),
        samples=[record_to_sample({"seed": seed + i}) for i in range(n_seeds)],
        method=method, baseline=baseline, version=VERSION, config=config,
        baseline_config=config,
        metadata={"paper": "2602.01322", "data": data},
    )
