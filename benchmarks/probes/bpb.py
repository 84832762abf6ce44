"""Held-out perplexity in bits per byte on the shipped corpus, and KV-cache bytes per token.

The yardstick for methods that make or change a model (``methods/recipes``): no paper's
benchmark, the standard language-modelling measure (bits per byte, as in the byte-level LM
literature, e.g. Al-Rfou et al. 2019) on text that ships offline — the held-out files of
:mod:`harness.corpus` (Python standard-library source and this suite's docs, split by file).
Each sample is one fixed window of ``window_bytes`` UTF-8 bytes of held-out text (the same
windows for every model), scored as one sequence after the tokenizer's start token:

    bpb = -sum(log2 p(token | start, earlier tokens)) / len(window.encode("utf-8"))

Bytes are the window's UTF-8 bytes as read (universal newlines, so ``\\n`` is one byte);
the per-window values are averaged (every window has ``window_bytes`` bytes, up to 3 fewer
at a multi-byte character). Tokenizers differ, bytes do not, so any two models compare.
The scorer also reports ``kv_bytes_per_token``, exact from the model's config and the dtype
it runs in (:func:`harness.models.arch.kv_bytes_per_token`).

Needs prompt log-probabilities, so a local transformers model (``whitebox/``, ``hf/``); any
other provider fails with a message that says so::

    inspect eval harness/bpb --model whitebox/smollm2-135m
    inspect eval harness/bpb --model whitebox/tiny -M recipe=qkv-sharing -M recipe.sharing=q-kv
"""

from __future__ import annotations

import asyncio
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import get_model
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver

from harness.corpus import DEFAULT_CORPUS, held_out_windows, load_corpus
from harness.models.arch import kv_bytes_per_token
from harness.models.logprobs import causal_lm_of, text_bits
from harness.plugins.benchmark import benchmark

DEFAULT_N = 64
DEFAULT_WINDOW_BYTES = 256
KEYS = ("bpb", "tokens_per_byte", "kv_bytes_per_token")


def record_to_sample(index: int, window: str) -> Sample:
    """One held-out window as a sample (its text is the input; there is no target)."""
    return Sample(id=f"w{index:04d}", input=window, target="",
                  metadata={"bytes": len(window.encode("utf-8"))})


def _score_window(api: Any, text: str) -> dict[str, float]:
    model, tokenizer, lock = causal_lm_of(api)
    with lock:
        bits, tokens = text_bits(model, tokenizer, text)
    dtype = str(next(model.parameters()).dtype)
    n_bytes = len(text.encode("utf-8"))
    return {"bits": bits, "bytes": n_bytes, "tokens": tokens,
            "kv_bytes_per_token": kv_bytes_per_token(model.config, dtype)}


@solver
def window_logprobs() -> Solver:
    """Score the sample's text under the task's model (exact token log-probabilities)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        api = get_model().api
        state.metadata["bpb"] = await asyncio.to_thread(_score_window, api, state.input_text)
        return state

    return solve


@scorer(metrics={key: [mean(), stderr()] for key in KEYS}, name="bpb")
def bpb_scorer() -> Scorer:
    """Bits per byte of the window, tokens per byte, and the model's KV bytes per token."""

    async def score(state: TaskState, target: Target) -> Score:
        found = state.metadata["bpb"]
        value = {"bpb": found["bits"] / found["bytes"],
                 "tokens_per_byte": found["tokens"] / found["bytes"],
                 "kv_bytes_per_token": float(found["kv_bytes_per_token"])}
        return Score(value=value, metadata=found)

    return score


@benchmark("bpb")
@task
def bpb(
    n: int = DEFAULT_N,
    window_bytes: int = DEFAULT_WINDOW_BYTES,
    corpus: str = DEFAULT_CORPUS,
) -> Task:
    """Held-out bits per byte on the shipped corpus (plus KV bytes per token).

    Args:
        n: Number of windows (evenly spaced over the held-out split).
        window_bytes: UTF-8 bytes per window.
        corpus: one of ``harness.corpus.CORPORA`` (``stdlib``, ``pydoc``, ``docs``,
            ``stdlib+pydoc``, ``stdlib+docs``; see :mod:`harness.corpus`).
    """
    source = load_corpus(corpus)
    windows = held_out_windows(source, window_bytes, n)
    dataset = MemoryDataset([record_to_sample(i, w) for i, w in enumerate(windows)],
                            name=f"bpb-{corpus}")
    return Task(
        dataset=dataset,
        solver=window_logprobs(),
        scorer=bpb_scorer(),
        metadata={"corpus": source.summary()},
        version="1.0.0",
    )
