"""Multi-turn cost with and without prefix reuse, on a real recorded agent episode.

    .venv/bin/pytest tests/perf/test_prefix_reuse_perf.py -m perf -s --benchmark-enable
    PREFIX_PERF_MODEL=qwen2.5-coder-1.5b ...      # default: the 0.5B model

The conversation is the 0.5B model's CausalGame episode on ``deployment_zone_trap_categorical``
from the published board's logs (22 model calls). Each of its model calls is replayed
through :class:`ChatEngine` with one new token, so the time is the prompt processing that
a turn costs: once with the engine's aligned-block reuse and prefix store, once
re-processing the whole conversation every turn (what the provider did before). Reported:
prompt tokens processed (and its ratio to the final conversation's length; target <= 1.3x)
and wall time of each. No assertion is made on timings.
"""

from __future__ import annotations

import importlib.util
import os
import time
from pathlib import Path
from typing import Any

import pytest

from harness.models import ladder

pytestmark = pytest.mark.perf

REPO = Path(__file__).resolve().parents[2]
EPISODE = (REPO / "leaderboards/ladder/logs/causalgame"
           / "causalgame_all--embedded_qwen2.5-coder-0.5b")
SAMPLE = "deployment_zone_trap_categorical"
MODEL = os.environ.get("PREFIX_PERF_MODEL", "qwen2.5-coder-0.5b")


def _turn_prompts() -> list[list[dict[str, Any]]]:
    """The message list of every model call of the recorded episode, in order."""
    from inspect_ai.model import ChatMessage
    from pydantic import TypeAdapter

    from harness.models.toolprompt import native_messages
    from harness.results import list_logs, read_sample_messages

    log = list_logs(EPISODE)[0]
    logged = TypeAdapter(list[ChatMessage]).validate_python(read_sample_messages(log, SAMPLE))
    messages = native_messages(logged)
    return [messages[:i] for i, m in enumerate(messages) if m["role"] == "assistant"]


def _replay(engine: Any, prompts: list[list[dict[str, Any]]], reuse: bool) -> dict[str, float]:
    processed = 0
    start = time.perf_counter()
    for chat in prompts:
        if not reuse:
            engine._aligned = []  # forget the live context: the whole prompt is evaluated
        done = engine.complete(chat, [], [], {"max_tokens": 1, "temperature": 0.0, "seed": 0})
        processed += done.prompt_tokens - done.cached_tokens
    final = done.prompt_tokens
    return {"processed": processed, "final_prompt": final, "ratio": processed / final,
            "seconds": time.perf_counter() - start}


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None or not EPISODE.is_dir(),
                    reason="needs llama-cpp-python and the published CausalGame logs")
def test_prefix_reuse_on_a_recorded_episode(benchmark: Any) -> None:
    if benchmark.disabled:  # minutes of prompt processing: a measurement, not a CI check
        pytest.skip("timing is off: run with --benchmark-enable to measure")
    if not ladder.status(ladder.get(MODEL))["ready"]:
        pytest.skip(f"{MODEL} is not fetched")
    from harness.models.llama_engine import shared_engine

    prompts = _turn_prompts()
    reused_engine = shared_engine(ladder.resolve(MODEL), 8192, 2, prefix_cache_mb=1024)
    bare_engine = shared_engine(ladder.resolve(MODEL), 8192, 2, prefix_cache_mb=0)
    fits = [p for p in prompts
            if len(reused_engine.prompt_tokens(reused_engine.prompt(p, []))) < 8000]
    with_reuse = reused_engine.worker.submit(_replay, reused_engine, fits, True).result()
    without = bare_engine.worker.submit(_replay, bare_engine, fits, False).result()
    print(f"\n{MODEL}, {len(fits)} turns of {SAMPLE}: with reuse {with_reuse['processed']:.0f} "
          f"prompt tokens processed ({with_reuse['ratio']:.2f}x the final prompt of "
          f"{with_reuse['final_prompt']:.0f}), {with_reuse['seconds']:.1f} s; without "
          f"{without['processed']:.0f} ({without['ratio']:.2f}x), {without['seconds']:.1f} s; "
          f"load avg {os.getloadavg()[0]:.2f}")
    benchmark.extra_info.update({"with_reuse": with_reuse, "without": without})
    assert with_reuse["processed"] < without["processed"]
    benchmark.pedantic(lambda: None, rounds=1)
