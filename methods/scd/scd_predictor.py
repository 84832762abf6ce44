"""SCD's learned patch predictor: shipped KV codes -> the consumer's normalised input.

SCD's "patch" (Semantic Cache Distillation; abstract only, no public code) *predicts the
normalised inputs* of a few transition layers so that the consumer recomputes their keys and
values with its own weights. :mod:`methods.scd.scd`'s first patch variant ships an extra
residual-stream code for those layers; this one ships nothing extra: for each patch layer
``L`` a small predictor maps what the consumer already receives — the decoded ``[K pre-RoPE
| V]`` codes of the producer's layers ``L-1, L, L+1`` — to the consumer's own
``input_layernorm`` output at ``L``; the consumer's ``k_proj``/``v_proj`` then make that
layer's cache.

Predictor: a low-rank linear map ``y = ((x - mu) / sd) D U + b`` (``D [F, r]``, ``U [r,
hidden]``) per patch layer, fitted in closed form (see :func:`fit`) on calibration prompts:
procedural recall dialogues this module writes (:func:`methods.scd.consumer.recall_dialogue`
under a seed offset of its own, so they are neither the consumer's fine-tuning data nor any
benchmark's items), coded at every rank in ``train_ranks`` so one predictor serves all code
ranks.

The loss constraint (our reading of the paper's "loss-constrained framework": the abstract
gives no formula). The predictor is fitted to the paper's target, the normalised input
(``e_y = |y_hat - y|^2 / |y|^2``), subject to a bound on the loss that actually reaches the
consumer, the relative error of the keys/values it makes from the prediction:
``e_kv = |(y_hat - y) W^T|^2 / |y W^T|^2 <= epsilon`` with ``W = [W_k; W_v]`` of that layer
(default ``epsilon = 0.05``, after the paper's 5% quality budget). Solved as a Lagrangian,
``e_y + lam * (e_kv - epsilon)``: exact primal solves, a search over ``lam >= 0``; the
held-out share of the calibration prompts reports whether the bound holds out of sample
(``constraint_met``).

The trained predictors are one artefact in the model cache, built once per configuration
(``<cache>/smollm2-135m-scd-predictor-<digest>.pt``, staged then renamed), with the CPU
seconds their calibration and training took and the loss history::

    python -m methods.scd.scd_predictor          # build (or show) the default artefact
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from harness.models.weights import cache_root
from methods.kv.cache import layers_of, prefill, rope_tables, unrope
from methods.xkv.xkv import _flat, factorize

DEFAULT_PREDICTOR_RANK = 64
DEFAULT_EPSILON = 0.05
DEFAULT_PROMPTS = 16
DEFAULT_HOLDOUT = 4
DEFAULT_TRAIN_RANKS: tuple[int | None, ...] = (None, 64, 32, 16)
DEFAULT_RIDGE = 1e-3
DEFAULT_DUAL_STEPS = 12
DEFAULT_SEED = 0
DEFAULT_N_NOISE = 40
CALIBRATION_SEED_OFFSET = 30_000
"""Calibration dialogues use seeds ``30_000 + seed`` (the consumer trains on ``10_000 +``)."""
VERSION = 1


@dataclass
class LayerPredictor:
    """The predictor of one patch layer's normalised input from ``sources``' decoded codes."""

    layer: int
    sources: tuple[int, ...]
    mean: torch.Tensor
    scale: torch.Tensor
    down: torch.Tensor
    up: torch.Tensor
    bias: torch.Tensor

    def __call__(self, features: torch.Tensor) -> torch.Tensor:
        """``[tokens, F]`` concatenated source codes -> ``[tokens, hidden]``."""
        x = (features.to(self.mean.dtype) - self.mean) / self.scale
        return x @ self.down @ self.up + self.bias

    def state(self) -> dict[str, Any]:
        """Plain tensors and ints for ``torch.save``."""
        return {"layer": self.layer, "sources": list(self.sources), "mean": self.mean,
                "scale": self.scale, "down": self.down, "up": self.up, "bias": self.bias}

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> LayerPredictor:
        """Inverse of :meth:`state`."""
        return cls(int(state["layer"]), tuple(int(s) for s in state["sources"]), state["mean"],
                   state["scale"], state["down"], state["up"], state["bias"])


def patch_layers(n_layers: int, patch: int) -> list[int]:
    """``patch`` evenly spaced layer indices starting at 0 (none when ``patch == 0``)."""
    patch = max(0, min(patch, n_layers))
    return sorted({round(i * n_layers / patch) for i in range(patch)}) if patch else []


def sources_of(layer: int, n_layers: int, window: int = 1) -> tuple[int, ...]:
    """The layers whose shipped codes feed the predictor of ``layer``: it and ``window``
    neighbours each side (each code is truncated in its own basis, so neighbours add
    information a single layer's rank-r code lost)."""
    return tuple(range(max(0, layer - window), min(n_layers, layer + window + 1)))


def decoded_code(k: torch.Tensor, v: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                 rank: int | None) -> tuple[torch.Tensor, int]:
    """One layer's decoded code of ``[K pre-RoPE | V]`` (``[tokens, 2 * kv_width]``) as the
    consumer receives it at ``rank``, and the code's bytes: what a reuse layer decodes and
    what the learned predictor reads."""
    joint = torch.cat([_flat(unrope(k, cos, sin)), _flat(v)], dim=1)
    code = factorize(joint, rank, 1.0)
    return code.dense(), code.nbytes


def features(decoded: Mapping[int, torch.Tensor], sources: Sequence[int]) -> torch.Tensor:
    """The predictor's input: the sources' decoded codes side by side."""
    return torch.cat([decoded[s] for s in sources], dim=1)


def kv_weight(consumer: Any, layer: int) -> torch.Tensor:
    """``[W_k; W_v]`` ``[2 * kv_width, hidden]`` of the consumer's layer (the constraint's
    metric: only the keys/values made from a patch prediction reach the cache)."""
    attn = consumer.model.layers[layer].self_attn
    return torch.cat([attn.k_proj.weight, attn.v_proj.weight], dim=0).detach().float()


def calibration_prompts(lm: Any, n: int, seed: int, n_noise: int = DEFAULT_N_NOISE) -> list[str]:
    """``n`` chat-formatted recall questions (no answers): the predictor's calibration set."""
    from methods.scd.consumer import recall_dialogue

    return [str(lm.chat_prompt([{"role": "user", "content": recall_dialogue(
        i, CALIBRATION_SEED_OFFSET + seed, n_noise)[0]}])) for i in range(n)]


def collect(producer: Any, consumer: Any, ids: torch.Tensor, layers: Sequence[int],
            ranks: Sequence[int | None]) -> dict[int, tuple[torch.Tensor, torch.Tensor]]:
    """One prompt's training pairs per patch layer: (features at every rank stacked on the
    token axis, the consumer's normalised input repeated to match)."""
    n_layers = int(consumer.config.num_hidden_layers)
    with torch.inference_mode():
        _, cache = prefill(producer, ids)
        hidden = consumer(input_ids=ids, output_hidden_states=True).hidden_states
        targets = {L: consumer.model.layers[L].input_layernorm(hidden[L])[0, :-1].float()
                   for L in layers}
    context = [(k[:, :, :-1], v[:, :, :-1]) for k, v in layers_of(cache)]
    tokens = int(context[0][0].shape[2])
    cos, sin = rope_tables(consumer, torch.arange(tokens))
    needed = sorted({s for L in layers for s in sources_of(L, n_layers)})
    decoded = {rank: {s: decoded_code(*context[s], cos, sin, rank)[0].float() for s in needed}
               for rank in ranks}
    out = {}
    for L in layers:
        src = sources_of(L, n_layers)
        x = torch.cat([features(decoded[rank], src) for rank in ranks], dim=0)
        out[L] = (x, targets[L].repeat(len(ranks), 1))
    return out


@dataclass
class FitResult:
    """A trained layer predictor and how its training went (per-step history)."""

    predictor: LayerPredictor
    history: dict[str, list[float]]
    lam: float
    """The multiplier of the returned solution (0 when the bound did not bind)."""
    e_y: float
    e_kv: float


def relative_errors(pred: LayerPredictor, x: torch.Tensor, y: torch.Tensor,
                    weight: torch.Tensor) -> tuple[float, float]:
    """(``e_y``, ``e_kv``) of ``pred`` on (``x``, ``y``)."""
    with torch.no_grad():
        err = pred(x) - y
        e_y = float(err.square().sum() / y.square().sum())
        e_kv = float((err @ weight.T).square().sum() / (y @ weight.T).square().sum())
    return e_y, e_kv


def _sqrt_and_inverse(g: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``G^(1/2)`` and ``G^(-1/2)`` of a symmetric positive definite matrix."""
    values, vectors = torch.linalg.eigh(g)
    root = values.clamp_min(1e-12).sqrt()
    return (vectors * root) @ vectors.T, (vectors / root) @ vectors.T


def fit(x: torch.Tensor, y: torch.Tensor, weight: torch.Tensor, *, layer: int,
        sources: tuple[int, ...], rank: int = DEFAULT_PREDICTOR_RANK,
        epsilon: float = DEFAULT_EPSILON, ridge: float = DEFAULT_RIDGE,
        dual_steps: int = DEFAULT_DUAL_STEPS, constrained: bool = True) -> FitResult:
    """Train one layer's rank-``rank`` predictor under ``e_kv <= epsilon``.

    Lagrangian ``e_y + lam * e_kv`` for a fixed ``lam`` is a weighted least-squares problem
    with metric ``G = I / E|y|^2 + lam W^T W / E|yW^T|^2``, whose rank-constrained minimiser
    is exact (reduced-rank ridge regression: the ridge solution projected on the top
    ``rank`` directions of its fitted values in the ``G`` metric). The dual is solved over
    ``lam``: ``lam = 0`` when that already meets the bound, otherwise the smallest ``lam``
    that does (found by doubling then bisection in log space, ``dual_steps`` solves), or
    the largest tried when the bound is out of reach (then ``e_kv`` is as low as this rank
    allows and the caller sees the bound unmet). ``constrained=False`` is ``lam = 0``:
    plain normalised-input regression, the comparison that shows what the bound changes.
    Deterministic (no sampling); ``history`` lists every ``lam`` tried and its errors.
    """
    x, y, weight = x.double(), y.double(), weight.double()
    mean = x.mean(0)
    scale = x.std(0).clamp_min(1e-6)
    xs = (x - mean) / scale
    bias = y.mean(0)
    yc = y - bias
    rows = x.shape[0]
    gram = xs.T @ xs
    cross = xs.T @ yc
    solve = torch.linalg.solve(gram + ridge * rows * torch.eye(gram.shape[0], dtype=gram.dtype),
                               cross)
    rank = max(1, min(rank, x.shape[1], y.shape[1]))
    wtw = weight.T @ weight
    y_energy = float(y.square().sum())
    kv_energy = float((y @ weight.T).square().sum())
    yy = yc.T @ yc

    def errors(beta: torch.Tensor) -> tuple[float, float]:
        # E = xs beta - yc; |E M|^2 = tr(M^T (beta^T gram beta - 2 beta^T cross + yy) M)
        e2 = beta.T @ gram @ beta - beta.T @ cross - cross.T @ beta + yy
        return float(torch.trace(e2)) / y_energy, float(torch.trace(wtw @ e2)) / kv_energy

    def primal(lam: float) -> tuple[torch.Tensor, torch.Tensor, float, float, float]:
        g = torch.eye(y.shape[1], dtype=y.dtype) / y_energy + lam * wtw / kv_energy
        root, inv_root = _sqrt_and_inverse(g)
        c = solve @ root
        _, vectors = torch.linalg.eigh(c.T @ (gram + ridge * rows * torch.eye(
            gram.shape[0], dtype=gram.dtype)) @ c)
        top = vectors[:, -rank:]
        down, up = c @ top, top.T @ inv_root
        e_y, e_kv = errors(down @ up)
        history["lam"].append(lam)
        history["e_y"].append(e_y)
        history["e_kv"].append(e_kv)
        history["loss"].append(e_y + lam * (e_kv - epsilon))
        return down, up, e_y, e_kv, lam

    history: dict[str, list[float]] = {"lam": [], "e_y": [], "e_kv": [], "loss": []}
    e0 = errors(torch.zeros_like(solve))  # the untrained predictor: the mean
    history.update(untrained_e_y=[e0[0]], untrained_e_kv=[e0[1]])
    best = primal(0.0)
    if constrained and best[3] > epsilon:
        low, high, found = 0.0, 1.0, None
        for _ in range(dual_steps):
            trial = primal(high)
            if trial[3] <= epsilon:
                found = trial
                break
            low, high, best = high, high * 4.0, trial
        if found is not None:
            for _ in range(dual_steps):
                mid = (low * high) ** 0.5 if low > 0 else high / 4.0
                trial = primal(mid)
                if trial[3] <= epsilon:
                    high, found = mid, trial
                else:
                    low = mid
            best = found
    down, up = best[0], best[1]
    predictor = LayerPredictor(layer, sources, mean.float(), scale.float(),
                               down.float(), up.float(), bias.float())
    return FitResult(predictor, history, best[4], best[2], best[3])


def config_for(consumer_dir: Path, patch: Sequence[int], **options: Any) -> dict[str, Any]:
    """Everything the artefact depends on (its cache key)."""
    marker = consumer_dir / "evalsuite-consumer.json"
    consumer = json.loads(marker.read_text()) if marker.is_file() else {"dir": str(consumer_dir)}
    return {"version": VERSION, "consumer": consumer,
            "patch": list(patch),
            "rank": int(options.get("rank", DEFAULT_PREDICTOR_RANK)),
            "epsilon": float(options.get("epsilon", DEFAULT_EPSILON)),
            "prompts": int(options.get("prompts", DEFAULT_PROMPTS)),
            "holdout": int(options.get("holdout", DEFAULT_HOLDOUT)),
            "train_ranks": [-1 if r is None else int(r)
                            for r in options.get("train_ranks", DEFAULT_TRAIN_RANKS)],
            "ridge": float(options.get("ridge", DEFAULT_RIDGE)),
            "seed": int(options.get("seed", DEFAULT_SEED))}


def artefact_path(config: Mapping[str, Any]) -> Path:
    """``<cache>/smollm2-135m-scd-predictor-<digest>.pt`` for a configuration."""
    digest = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:12]
    return cache_root() / f"smollm2-135m-scd-predictor-{digest}.pt"


def train(producer: Any, consumer: Any, tokenizer: Any, prompts: Sequence[str],
          config: Mapping[str, Any]) -> dict[str, Any]:
    """Calibrate and train every patch layer's predictor; the artefact's contents."""
    started = time.process_time()
    ranks = [None if r < 0 else r for r in config["train_ranks"]]
    pairs: dict[int, list[tuple[torch.Tensor, torch.Tensor]]] = {L: [] for L in config["patch"]}
    for text in prompts:
        ids = tokenizer(text, return_tensors="pt", add_special_tokens=False).input_ids
        for L, pair in collect(producer, consumer, ids, config["patch"], ranks).items():
            pairs[L].append(pair)
    calibration_s = time.process_time() - started
    n_train = len(prompts) - int(config["holdout"])
    layers, report = {}, {}
    for L, items in pairs.items():
        x = torch.cat([p[0] for p in items[:n_train]])
        y = torch.cat([p[1] for p in items[:n_train]])
        weight = kv_weight(consumer, L)
        sources = sources_of(L, int(consumer.config.num_hidden_layers))
        result = fit(x, y, weight, layer=L, sources=sources,
                     rank=config["rank"], epsilon=config["epsilon"], ridge=config["ridge"])
        hx = torch.cat([p[0] for p in items[n_train:]])
        hy = torch.cat([p[1] for p in items[n_train:]])
        train_e = relative_errors(result.predictor, x, y, weight)
        held_e = relative_errors(result.predictor, hx, hy, weight)
        layers[L] = result.predictor.state()
        report[L] = {"train_e_y": train_e[0], "train_e_kv": train_e[1],
                     "heldout_e_y": held_e[0], "heldout_e_kv": held_e[1],
                     "constraint_met": held_e[1] <= config["epsilon"],
                     "lam": result.lam, "rows": int(x.shape[0]),
                     "untrained_e_y": result.history["untrained_e_y"][0],
                     "history": result.history}
    return {"config": dict(config), "layers": layers, "report": report,
            "cpu_s": {"calibration": calibration_s,
                      "total": time.process_time() - started}}


def ensure_predictor(producer: Any, consumer_lm: Any, consumer_dir: Path,
                     patch: Sequence[int], **options: Any) -> dict[int, LayerPredictor]:
    """Load the predictors for this configuration, training them once if missing."""
    config = config_for(consumer_dir, patch, **options)
    path = artefact_path(config)
    if not path.is_file():
        torch.manual_seed(config["seed"])
        prompts = calibration_prompts(consumer_lm, config["prompts"], config["seed"])
        blob = train(producer, consumer_lm.model, consumer_lm.tokenizer, prompts, config)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, staging = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
        os.close(fd)
        torch.save(blob, staging)
        os.replace(staging, path)
    return load_predictor(path, config)


def load_predictor(path: Path, config: Mapping[str, Any] | None = None
                   ) -> dict[int, LayerPredictor]:
    """The predictors saved at ``path`` (checked against ``config`` when given)."""
    blob = torch.load(path, weights_only=False)
    if config is not None and blob["config"] != dict(config):
        raise ValueError(f"{path} was built for another configuration")
    return {int(L): LayerPredictor.from_state(s) for L, s in blob["layers"].items()}


def summary(path: Path) -> dict[str, Any]:
    """The artefact's configuration, CPU seconds and per-layer errors (no history)."""
    blob = torch.load(path, weights_only=False)
    report = {L: {k: v for k, v in r.items() if k != "history"} for L, r in blob["report"].items()}
    return {"path": str(path), "config": blob["config"], "cpu_s": blob["cpu_s"], "layers": report}


def main(argv: list[str] | None = None) -> None:
    """Build (once) the predictor the study's ``predictor=learned`` level uses; print it."""
    import argparse

    argparse.ArgumentParser(
        prog="harness method scd-predictor",
        description="Build (once, cached) SCD's learned patch predictor for SmolLM2-135M "
                    "and print its configuration, CPU seconds and per-layer errors.",
    ).parse_args(argv)
    from harness.models.whitebox import WhiteBoxLM
    from methods.scd.consumer import ensure_consumer

    torch.set_num_threads(1)
    producer = WhiteBoxLM.load()
    folder = ensure_consumer()
    consumer = WhiteBoxLM.load(folder)
    patch = patch_layers(producer.n_layers, 2)
    ensure_predictor(producer.model, consumer, folder, patch)
    print(json.dumps(summary(artefact_path(config_for(folder, patch))), indent=2))


if __name__ == "__main__":
    from harness.errors import guarded

    guarded(main)
