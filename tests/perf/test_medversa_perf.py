"""MedVersa retrieval latency with 1,000 stored edits (pytest-benchmark; marker ``perf``).

Two numbers: one query end to end (MiniLM encode + projection + top-1 with prototype gate)
and the search step alone on a pre-encoded query, so encoder cost and knowledge-base cost can
be told apart. Keys are real MiniLM embeddings of 1,000 edit prompts when the reference file
is present, else of the shipped sample prompts repeated with an index (search cost depends on
the number of keys, not their text).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from methods.editors.retrieval import Projection, Retriever

pytestmark = pytest.mark.perf

REPO = Path(__file__).resolve().parents[2]
REAL_TEST = (REPO / "../shared/reference-data/medversa/test.json").resolve()
N_EDITS = 1000


def _prompts() -> list[str]:
    if REAL_TEST.is_file():
        return [r["prompt"] for r in json.loads(REAL_TEST.read_text())][:N_EDITS]
    from environments.medversa import load_dataset

    base = [c.prompt for c in load_dataset("sample")]
    return [f"{base[i % len(base)]} ({i})" for i in range(N_EDITS)]


@pytest.fixture(scope="module")
def retriever() -> Iterator[Retriever]:
    """1,000 stored edits; one torch thread (a single short query is latency-bound, and on a
    shared machine OpenMP threads waiting on each other dominate the time otherwise)."""
    import torch

    from benchmarks.medversa.medversa import editor_train
    from methods.editors.retrieval import default_encoder, default_projection

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        r = Retriever(default_encoder(), default_projection(editor_train()))
        r.add(_prompts())
        assert len(r.keys) == N_EDITS
        yield r
    finally:
        torch.set_num_threads(threads)


@pytest.mark.slow
def test_retrieval_latency_1000_edits_end_to_end(benchmark: Any, retriever: Retriever) -> None:
    query = "Which test detects alcohol in a blood sample?"
    hits = benchmark(retriever.search, [query])
    assert len(hits) == 1


def test_retrieval_search_only_1000_edits(benchmark: Any, retriever: Retriever) -> None:
    proj: Projection = retriever.projection
    q = proj.project(retriever.encoder.encode(["Which nerve supplies the deltoid?"]))

    def search() -> int:
        scores = q @ retriever.keys.T
        best = int(scores.argmax())
        return best if scores[0, best] > proj.prototype_scores(q)[0] else -1

    got = benchmark(search)
    assert -1 <= got < N_EDITS
    assert np.isfinite(retriever.keys).all()
