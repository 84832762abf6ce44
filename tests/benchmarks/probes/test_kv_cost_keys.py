"""The kv_stats scorer scores a method's cost numbers (ArborKV's re-prefill work and time)
when the method reports them, so a study can analyse them; other methods keep five keys."""

from __future__ import annotations

import asyncio
from typing import Any

from inspect_ai.model import ModelName, ModelOutput
from inspect_ai.scorer import Target
from inspect_ai.solver import TaskState

from benchmarks.probes.passkey import KV_KEYS, kv_stats


def _state(metadata: dict[str, Any]) -> TaskState:
    output = ModelOutput.from_content("m", "x")
    output.metadata = metadata
    return TaskState(model=ModelName("mockllm/m"), sample_id=1, epoch=1, input="q",
                     messages=[], output=output)


def test_cost_numbers_become_score_keys_only_when_reported() -> None:
    score = kv_stats()
    base = {"kv_bytes": 100, "kv_bytes_full": 400, "kv_ratio": 4.0, "agreement": 1.0,
            "exact": True}
    cost = {"compute_ratio": 1.25, "time_ratio": 1.3, "search_cpu_seconds": 2.5,
            "reprefill_cpu_seconds": 0.4, "reprefill_tokens": 12, "nodes": 9}
    got = asyncio.run(score(_state({"kv": {**base, **cost}}), Target("1")))
    assert got is not None and isinstance(got.value, dict)
    assert got.value["compute_ratio"] == 1.25 and got.value["reprefill_tokens"] == 12.0
    assert got.value["search_cpu_seconds"] == 2.5
    assert "nodes" not in got.value  # a count that is no cost stays in the metadata only
    assert got.metadata == {"kv": {**base, **cost}}
    plain = asyncio.run(score(_state({"kv": base}), Target("1")))
    assert plain is not None and isinstance(plain.value, dict)
    assert set(plain.value) == set(KV_KEYS)
