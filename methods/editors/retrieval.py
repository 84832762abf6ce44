"""MedREK-style retrieval editor: key-aware retrieval with a learned no-edit prototype.

Spec §4 in small: sentence features come from MiniLM (``harness.models.minilm``) instead of
RoBERTa; one shared query–key projection (residual linear map, identity at start) embeds both
the stored edit prompts (keys) and incoming queries, so a paraphrase lands next to its key;
a learned prototype vector competes with the keys, and a query only takes its top-1 edit
when that edit scores above the prototype ("no edit" otherwise). The projection and the
prototype are trained contrastively on a train split with the three losses of §4.5
(own key beats prototype and other keys; prototype beats other edits' keys; locality queries
prefer the prototype). The retrieved edit is injected as a one-line prompt.

Scores are cosine similarities divided by a temperature; the prototype is not normalised,
so its length acts as a learned, direction-dependent threshold.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from harness.plugins.editor import Edit, Editor, EditTriple, editor

DEFAULT_TEMPERATURE = 0.05
DEFAULT_STEPS = 100
DEFAULT_BATCH = 64
DEFAULT_LR = 1e-3
HINGE = 1.2  # spec §4.5: c = 1.2
ANCHOR_WEIGHT = 1.0  # keeps the projection near the identity on a small train split


class Encoder(Protocol):
    """What the retriever needs from a sentence encoder (MiniLM in practice)."""

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class TrainTriple:
    """One train record: edit prompt, its paraphrase, and an unrelated locality prompt."""

    prompt: str
    rephrase: str
    locality: str


@dataclass
class Projection:
    """The trained query–key module: ``f(x) = normalize(x + x @ delta)`` and the prototype."""

    delta: np.ndarray  # [d, d]
    prototype: np.ndarray  # [d]
    temperature: float = DEFAULT_TEMPERATURE

    @classmethod
    def identity(cls, dim: int, threshold: float = 0.75) -> Projection:
        """Untrained: cosine retrieval with a fixed cosine ``threshold`` along the mean key."""
        proto = np.zeros(dim, dtype=np.float32)
        proto[0] = threshold  # only its length matters for an untrained cosine retriever
        return cls(np.zeros((dim, dim), dtype=np.float32), proto)

    def project(self, vecs: np.ndarray) -> np.ndarray:
        """Queries and keys in the shared space (unit rows)."""
        out = vecs + vecs @ self.delta
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return (out / np.maximum(norms, 1e-9)).astype(np.float32)

    def prototype_scores(self, projected: np.ndarray) -> np.ndarray:
        """Score of the prototype for each projected query."""
        if np.allclose(self.delta, 0) and np.count_nonzero(self.prototype) == 1:
            return np.full(len(projected), float(np.abs(self.prototype).sum()), np.float32)
        return projected @ self.prototype

    def save(self, path: str | Path) -> None:
        """Write to an ``.npz`` file."""
        np.savez(path, delta=self.delta, prototype=self.prototype,
                 temperature=np.float32(self.temperature))

    @classmethod
    def load(cls, path: str | Path) -> Projection:
        """Read an ``.npz`` written by :meth:`save`."""
        data = np.load(path)
        return cls(data["delta"], data["prototype"], float(data["temperature"]))


def _hinge_rows(probs: Any, index: Any) -> Any:
    """Rows whose target probability is below ``HINGE`` × the best competing probability."""
    import torch

    target = probs.gather(1, index[:, None])[:, 0]
    others = probs.scatter(1, index[:, None], -1.0)
    return target < HINGE * others.max(dim=1).values, target, torch.log(target.clamp_min(1e-12))


def train_projection(
    triples: Sequence[TrainTriple],
    encoder: Encoder,
    steps: int = DEFAULT_STEPS,
    batch_size: int = DEFAULT_BATCH,
    lr: float = DEFAULT_LR,
    temperature: float = DEFAULT_TEMPERATURE,
    seed: int = 1,
) -> Projection:
    """Contrastive training of the projection and prototype (spec §4.5, L_q1 + L_q2 + L_q3)."""
    import torch

    if len(triples) < 2:
        raise ValueError("need at least 2 train records")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny matrices: one thread is faster than contended many
    try:
        return _train(triples, encoder, steps, batch_size, lr, temperature, seed)
    finally:
        torch.set_num_threads(threads)


def _train(triples: Sequence[TrainTriple], encoder: Encoder, steps: int, batch_size: int,
           lr: float, temperature: float, seed: int) -> Projection:
    import torch

    gen = torch.Generator().manual_seed(seed)
    p = torch.from_numpy(encoder.encode([t.prompt for t in triples]))
    g = torch.from_numpy(encoder.encode([t.rephrase for t in triples]))
    loc = torch.from_numpy(encoder.encode([t.locality for t in triples]))
    dim = p.shape[1]
    delta = torch.zeros(dim, dim, requires_grad=True)
    # prototype starts along the mean key with a cosine-like length of 0.6
    proto0 = torch.nn.functional.normalize(p.mean(0), dim=0) * 0.6
    proto = proto0.clone().requires_grad_(True)
    opt = torch.optim.Adam([delta, proto], lr=lr)

    def project(x: Any) -> Any:
        return torch.nn.functional.normalize(x + x @ delta, dim=1)

    n = len(triples)
    b = min(batch_size, n)
    for _ in range(steps):
        idx = torch.randperm(n, generator=gen)[:b]
        swap = torch.rand(b, generator=gen) < 0.5  # Q1/Q2 get prompt or paraphrase at random
        q1 = torch.where(swap[:, None], g[idx], p[idx])
        q2 = torch.where(swap[:, None], p[idx], g[idx])
        keys, qa, qb, ql = project(p[idx]), project(q1), project(q2), project(loc[idx])
        eye = torch.arange(b)
        # L_q1: each query picks its own key among [keys; prototype]
        s1 = torch.cat([qa @ keys.T, (qa @ proto)[:, None]], dim=1) / temperature
        l1 = -torch.log_softmax(s1, dim=1)[eye, eye].mean()
        # L_q2: with its own key replaced by the prototype, the prototype beats other keys
        s2 = qb @ keys.T
        s2 = s2.clone()
        s2[eye, eye] = qb @ proto
        prob2 = torch.softmax(s2 / temperature, dim=1)
        keep2, _, logp2 = _hinge_rows(prob2, eye)
        l2 = -logp2[keep2].mean() if keep2.any() else torch.zeros(())
        # L_q3: locality queries prefer the prototype over every key
        s3 = torch.cat([ql @ keys.T, (ql @ proto)[:, None]], dim=1) / temperature
        prob3 = torch.softmax(s3, dim=1)
        proto_idx = torch.full((b,), b, dtype=torch.long)
        keep3, _, logp3 = _hinge_rows(prob3, proto_idx)
        l3 = -logp3[keep3].mean() if keep3.any() else torch.zeros(())
        loss = l1 + l2 + l3 + ANCHOR_WEIGHT * (delta ** 2).sum()
        opt.zero_grad()
        loss.backward()  # type: ignore[no-untyped-call]
        opt.step()
    return Projection(delta.detach().numpy().copy(), proto.detach().numpy().copy(), temperature)


class Retriever:
    """Knowledge base of projected keys; top-1 retrieval gated by the prototype."""

    def __init__(self, encoder: Encoder, projection: Projection) -> None:
        self.encoder = encoder
        self.projection = projection
        self.keys = np.zeros((0, projection.delta.shape[0]), dtype=np.float32)

    def add(self, prompts: Sequence[str]) -> None:
        """Embed and store keys (the edit prompts: keys live in the query space)."""
        if prompts:
            new = self.projection.project(self.encoder.encode(list(prompts)))
            self.keys = np.concatenate([self.keys, new], axis=0)

    def clear(self) -> None:
        """Drop every key."""
        self.keys = self.keys[:0]

    def scores(self, queries: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(key scores [q, n], prototype scores [q])`` before the temperature."""
        q = self.projection.project(self.encoder.encode(list(queries)))
        return q @ self.keys.T, self.projection.prototype_scores(q)

    def search(self, queries: Sequence[str]) -> list[int | None]:
        """Top-1 key per query, or ``None`` when the prototype scores at least as high."""
        if len(queries) == 0:
            return []
        if len(self.keys) == 0:
            return [None for _ in queries]
        key_scores, proto = self.scores(queries)
        best = key_scores.argmax(axis=1)
        top = key_scores[np.arange(len(queries)), best]
        return [int(b) if t > p else None for b, t, p in zip(best, top, proto, strict=True)]


_DEFAULT: dict[str, Projection] = {}
_DEFAULT_LOCK = threading.Lock()


def default_encoder() -> Encoder:
    """The process-wide MiniLM encoder."""
    from harness.models.minilm import MiniLM

    return MiniLM.shared()


def default_projection(train: Sequence[TrainTriple | EditTriple], key: str | None = None,
                       steps: int = DEFAULT_STEPS) -> Projection:
    """A projection trained once per process per training set (``key``: default, a digest
    of the triples). The caller supplies the train split: editors never load data."""
    # rows may carry more fields (MedREK's 5-field records): the retriever uses the first 3
    triples = [t if isinstance(t, TrainTriple) else TrainTriple(t[0], t[1], t[2]) for t in train]
    if not triples:
        raise ValueError("the retrieval projection needs at least one training triple")
    if key is None:
        digest = hashlib.sha256()
        for t in triples:
            digest.update("\x1f".join((t.prompt, t.rephrase, t.locality)).encode() + b"\x1e")
        key = f"{digest.hexdigest()[:16]}:{steps}"
    with _DEFAULT_LOCK:
        if key not in _DEFAULT:
            _DEFAULT[key] = train_projection(triples, default_encoder(), steps=steps)
        return _DEFAULT[key]


@editor("retrieval", extra="cpu",
        summary="MedREK-style key-aware retrieval (MiniLM + trained projection + prototype gate)")
class RetrievalEditor(Editor):
    """Top-1 retrieved edit (or none) written before the query as a one-line prompt."""

    name = "retrieval"

    def __init__(self, retriever: Retriever | None = None,
                 train: Sequence[TrainTriple | EditTriple] | None = None) -> None:
        super().__init__()
        if retriever is None:
            if not train:
                raise ValueError(
                    f"the {self.name} editor learns its projection: pass train= triples "
                    "(edit prompt, paraphrase, locality prompt) from the benchmark's data")
            retriever = Retriever(default_encoder(), default_projection(train))
        self.retriever = retriever

    @classmethod
    def build(cls, *, model: Any = None, tokenizer: Any = None,
              train: Sequence[EditTriple] | None = None) -> Editor:
        """A retrieval editor whose projection is trained on ``train``."""
        return cls(train=train)

    def _added(self, edits: list[Edit]) -> None:
        self.retriever.add([e.prompt for e in edits])

    def _cleared(self) -> None:
        self.retriever.clear()

    def retrieve(self, queries: Sequence[str]) -> list[int | None]:
        """Top-1 edit per query through the prototype gate."""
        return self.retriever.search(queries)
