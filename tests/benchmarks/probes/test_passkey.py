"""Passkey probe: seeded items, one needle each, scorers that read the answer and KV report."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from inspect_ai.model import ModelName, ModelOutput
from inspect_ai.scorer import Target
from inspect_ai.solver import TaskState

from benchmarks.probes.passkey import kv_stats, passkey, passkey_match
from environments.probes.passkey import FILLER, make_items


def test_items_are_seeded_and_hold_one_needle() -> None:
    a, b = make_items(5, seed=3, n_filler=30), make_items(5, seed=3, n_filler=30)
    assert a == b
    assert make_items(5, seed=4, n_filler=30) != a
    for item in a:
        assert item.context.count(item.key) == 2  # "The pass key is K ... K is the pass key"
        assert len(item.key) == 5 and item.key.isdigit()
        assert 0.0 <= item.depth <= 1.0
        assert sum(item.context.count(s) for s in FILLER) == 30


def test_context_grows_with_filler() -> None:
    short, long = make_items(1, n_filler=10)[0], make_items(1, n_filler=100)[0]
    assert len(long.context) > 5 * len(short.context)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        make_items(1, digits=0)


def test_task_builds_samples() -> None:
    task = passkey(n=4, seed=1, n_filler=12)
    samples = list(task.dataset)
    assert len(samples) == 4
    assert all(str(s.target[0]) in str(s.input) for s in samples)


def _state(text: str, metadata: dict[str, Any] | None = None) -> TaskState:
    output = ModelOutput.from_content("m", text)
    output.metadata = metadata
    return TaskState(model=ModelName("mockllm/m"), sample_id=1, epoch=1, input="q",
                     messages=[], output=output)


def test_passkey_match_needs_the_whole_number() -> None:
    score = passkey_match()
    right = asyncio.run(score(_state("The pass key is 48213."), Target("48213")))
    partial = asyncio.run(score(_state("The pass key is 4821."), Target("48213")))
    longer = asyncio.run(score(_state("It is 482139."), Target("48213")))
    assert right is not None and partial is not None and longer is not None
    assert (right.value, partial.value, longer.value) == ("C", "I", "I")


def test_kv_stats_reports_model_numbers() -> None:
    score = kv_stats()
    meta = {"kv": {"kv_bytes": 100, "kv_bytes_full": 400, "kv_ratio": 4.0, "agreement": 0.5,
                   "exact": False}}
    got = asyncio.run(score(_state("x", meta), Target("1")))
    assert got is not None
    assert got.value == {"kv_bytes": 100.0, "kv_bytes_full": 400.0, "kv_ratio": 4.0,
                         "agreement": 0.5, "exact": 0.0}
    plain = asyncio.run(score(_state("x"), Target("1")))
    assert plain is not None
    assert plain.explanation == "no KV report"
