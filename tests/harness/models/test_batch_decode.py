"""The batched decoder behind ``harness serve --parallel N``: several requests in one
``llama_decode`` give the replies each would get alone (and that the sequential engine
gives), with their own sampling settings, grammar and prefix reuse."""

from __future__ import annotations

import importlib.util
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from harness.models.llama_engine import BLOCK, ChatEngine, Completion, shared_engine
from harness.models.weights import smollm2_gguf

pytestmark = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                                reason="llama-cpp-python is not installed")

GREEDY = {"max_tokens": 24, "temperature": 0.0, "seed": 1}
SAMPLED = {"max_tokens": 16, "temperature": 0.9, "top_p": 0.95, "seed": 5}
ADD = {"type": "function", "function": {
    "name": "add", "description": "Add two integers.",
    "parameters": {"type": "object", "properties": {
        "x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"]}}}


def _chat(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


# prompts of different lengths: under one block, one block and a partial, several blocks
PROMPTS = [
    "Name a colour.",
    "Write one sentence about a lighthouse. " + "Be brief. " * 12,
    "List three rivers. " + "Say why each matters to the people near it. " * 16,
]


@pytest.fixture(scope="module")
def engine() -> ChatEngine:
    return shared_engine(smollm2_gguf(), 2048, 2, prefix_cache_mb=64)


@pytest.fixture(scope="module")
def decoder(engine: ChatEngine) -> Iterator[Any]:
    from harness.models.batch_decode import BatchDecoder

    made = BatchDecoder(engine, 4)
    yield made
    made.close()


Job = tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]


def _together(decoder: Any, jobs: list[Job], stagger_s: float = 0.0) -> list[Completion]:
    """Submit every job from its own thread at once (or the i-th ``i * stagger_s`` seconds
    later, so it joins sequences already generating), so they share decode steps."""
    results: list[Completion | None] = [None] * len(jobs)
    barrier = threading.Barrier(len(jobs))

    def run(i: int) -> None:
        barrier.wait()
        time.sleep(i * stagger_s)
        results[i] = decoder.complete(*jobs[i])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(jobs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert all(r is not None for r in results)
    return [r for r in results if r is not None]


@pytest.mark.slow
def test_batched_replies_equal_alone_and_sequential(engine: ChatEngine, decoder: Any) -> None:
    """Greedy and seeded-sampled replies are the same decoded alone by the engine, alone by
    the decoder, and four at a time in one batch (SmolLM2-135M Q4_1, 2 threads)."""
    jobs: list[Job] = [(_chat(p), [], [], dict(GREEDY)) for p in PROMPTS] + [
        (_chat(PROMPTS[1]), [], [], dict(SAMPLED))]
    sequential = [engine.worker.submit(engine.complete, *job).result() for job in jobs]
    alone = [decoder.complete(*job) for job in jobs]
    steps = decoder.steps
    batched = _together(decoder, jobs)
    assert decoder.peak >= 2  # they did share steps
    # fewer steps than alone: the sequences advanced together
    assert decoder.steps - steps < sum(r.completion_tokens for r in batched)
    for seq, one, many in zip(sequential, alone, batched, strict=True):
        assert one.text == seq.text and many.text == seq.text
        assert many.completion_tokens == seq.completion_tokens
        assert many.finish_reason == seq.finish_reason
        assert many.prompt_tokens == seq.prompt_tokens


@pytest.mark.slow
def test_each_sequence_keeps_its_own_settings(decoder: Any) -> None:
    """In one batch: a stop string ends one reply, a small max_tokens another, a forced
    tool call decodes under its grammar into valid arguments, other seeds differ."""
    jobs: list[Job] = [
        (_chat(PROMPTS[0]), [], [], {**GREEDY, "max_tokens": 3}),
        (_chat(PROMPTS[1]), [], [], {**GREEDY, "stop": [" "]}),
        (_chat("What is 2 + 3?"), [ADD], [ADD], {**GREEDY, "max_tokens": 40}),
        (_chat(PROMPTS[2]), [], [], {**SAMPLED, "seed": 6}),
        (_chat(PROMPTS[2]), [], [], {**SAMPLED, "seed": 7}),
    ]
    short, stopped, call, a, b = _together(decoder, jobs)
    assert short.completion_tokens == 3 and short.finish_reason == "length"
    assert stopped.finish_reason == "stop" and " " not in stopped.text.strip()
    assert call.grammar
    body = call.text.split("<tool_call>", 1)[1].rsplit("</tool_call>", 1)[0]
    parsed = json.loads(body)
    assert parsed["name"] == "add" and set(parsed["arguments"]) == {"x", "y"}
    assert a.text != b.text


@pytest.mark.slow
def test_a_follow_up_reuses_its_prefix_in_the_batch(decoder: Any) -> None:
    """A conversation's second turn resumes from its aligned blocks (cached_tokens), in
    the slot that holds them or from the store, and the reply equals a cold decode's."""
    first = _chat(PROMPTS[2])
    done = decoder.complete(first, [], [], dict(GREEDY))
    follow = [*first, {"role": "assistant", "content": done.text},
              {"role": "user", "content": "And one more?"}]
    jobs: list[Job] = [(follow, [], [], dict(GREEDY)), (_chat(PROMPTS[0]), [], [], dict(GREEDY))]
    again, _ = _together(decoder, jobs)
    assert again.cached_tokens >= BLOCK and again.cached_tokens % BLOCK == 0
    from harness.models.batch_decode import BatchDecoder

    cold = BatchDecoder(decoder.engine, 2)
    cold.store = None
    try:
        fresh = cold.complete(follow, [], [], dict(GREEDY))
    finally:
        cold.close()
    assert fresh.cached_tokens == 0 and fresh.text == again.text


@pytest.mark.slow
def test_qwen_replies_do_not_depend_on_the_batch() -> None:
    """Qwen2.5-Coder-0.5B's prompt KV depends on how its tokens are cut into micro-batches
    (a prompt mixed into one batch with other sequences' tokens gave other greedy replies);
    the decoder gives each multi-token prompt chunk a call of its own, so replies decoded
    alone, four at a time and by the sequential engine are the same."""
    from harness.models import ladder
    from harness.models.batch_decode import BatchDecoder
    from harness.models.ladder import resolve_gguf

    rung = ladder.find("qwen2.5-coder-0.5b")
    if rung is None or not ladder.status(rung)["ready"]:
        pytest.skip("qwen2.5-coder-0.5b is not fetched")
    engine = shared_engine(resolve_gguf("qwen2.5-coder-0.5b"), 2048, 2, prefix_cache_mb=0)
    prompts = ["Write a short story about a lighthouse keeper.",
               "Explain how a bicycle gear works, step by step.",
               "Describe a market in the morning, with its sounds and smells.",
               "Tell me about the life cycle of a star."]
    jobs: list[Job] = [(_chat(p), [], [], {**GREEDY, "max_tokens": 40}) for p in prompts]
    made = BatchDecoder(engine, 4)
    try:
        sequential = [engine.worker.submit(engine.complete, *job).result() for job in jobs]
        batched = _together(made, jobs)
        joined = _together(made, jobs, stagger_s=0.3)
    finally:
        made.close()
    assert [b.text for b in batched] == [s.text for s in sequential]
    assert [b.text for b in joined] == [s.text for s in sequential]


def test_slot_count_is_bounded(engine: ChatEngine) -> None:
    from harness.models.batch_decode import MAX_SLOTS, BatchDecoder

    with pytest.raises(ValueError, match="slots"):
        BatchDecoder(engine, MAX_SLOTS + 1)


def test_a_prompt_longer_than_the_window_is_answered_without_decoding(decoder: Any) -> None:
    done = decoder.complete(_chat("word " * 3000), [], [], dict(GREEDY))
    assert done.finish_reason == "model_length" and done.completion_tokens == 0
