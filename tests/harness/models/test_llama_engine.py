"""The llama.cpp chat engine: prefix reuse across turns and samples, without losing
determinism (same prompt, same reply, whatever ran before)."""

from __future__ import annotations

import importlib.util

import pytest

from harness.models.llama_engine import BLOCK, PrefixStore, shared_engine
from harness.models.weights import smollm2_gguf

pytestmark = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                                reason="llama-cpp-python is not installed")

SAMPLED = {"max_tokens": 12, "temperature": 0.8, "top_p": 0.95, "seed": 11}


def _conversation(tag: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": f"You are assistant {tag}. " * 25}]


def _episode(engine, order: list[str], turns: int = 3) -> dict[str, list[tuple[str, int]]]:
    """Run ``turns`` turns of each conversation in ``order``; replies and cached counts."""
    chats = {tag: _conversation(tag) for tag in order}
    seen: dict[str, list[tuple[str, int]]] = {tag: [] for tag in order}
    for turn in range(turns):
        for tag in order:
            chats[tag].append({"role": "user", "content": f"Turn {turn}: one word, please."})
            done = engine.complete(chats[tag], [], [], dict(SAMPLED))
            chats[tag].append({"role": "assistant", "content": done.text})
            seen[tag].append((done.text, done.cached_tokens))
    return seen


@pytest.mark.slow
def test_interleaved_samples_reuse_their_own_prefix_and_stay_deterministic() -> None:
    engine = shared_engine(smollm2_gguf(), 2048, 2, prefix_cache_mb=256)
    interleaved = _episode(engine, ["A", "B"])
    alone = {tag: _episode(engine, [tag])[tag] for tag in ("B", "A")}
    for tag in ("A", "B"):
        assert [t for t, _ in interleaved[tag]] == [t for t, _ in alone[tag]]
        # later turns resume from the conversation's own stored blocks
        cached = [c for _, c in interleaved[tag]]
        assert cached[0] == 0 and cached[1] >= BLOCK and cached[2] >= cached[1]
        assert all(c % BLOCK == 0 for c in cached)


@pytest.mark.slow
def test_without_a_store_replies_are_the_same() -> None:
    stored = shared_engine(smollm2_gguf(), 2048, 2, prefix_cache_mb=256)
    bare = shared_engine(smollm2_gguf(), 2048, 2, prefix_cache_mb=0)
    assert [t for t, _ in _episode(stored, ["C"])["C"]] == [
        t for t, _ in _episode(bare, ["C"])["C"]]


def test_store_evicts_least_recently_used_past_its_budget() -> None:
    store = PrefixStore(capacity_bytes=250)
    store.put(tuple(range(BLOCK)), b"a" * 100)
    store.put(tuple(range(1, BLOCK + 1)), b"b" * 100)
    store.get(tuple(range(BLOCK)))  # touch the first: the second is now the oldest
    store.put(tuple(range(2, BLOCK + 2)), b"c" * 100)
    assert len(store) == 2 and store.used == 200
    assert store.best(list(range(BLOCK)) + [999], limit=10 * BLOCK) == (
        tuple(range(BLOCK)), BLOCK)
    assert store.best(list(range(1, BLOCK + 1)), limit=10 * BLOCK) is None


@pytest.mark.slow
def test_tool_choice_none_keeps_the_tools_block_and_the_prefix() -> None:
    """Inspect drops tools under ``tool_choice="none"`` unless the provider needs them; the
    embedded provider keeps a native tools block so a closing no-tools turn (CausalGame's
    report) re-uses the episode's prefix instead of re-processing it."""
    import asyncio

    from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model
    from inspect_ai.tool import ToolInfo, ToolParam, ToolParams

    import harness.models.providers  # noqa: F401
    from harness.models import ladder

    if not ladder.status(ladder.get("qwen2.5-coder-0.5b"))["ready"]:
        pytest.skip("qwen2.5-coder-0.5b is not fetched")
    add = ToolInfo(name="add", description="Add two integers.", parameters=ToolParams(
        properties={"x": ToolParam(type="integer"), "y": ToolParam(type="integer")},
        required=["x", "y"]))
    model = get_model("embedded/qwen2.5-coder-0.5b")
    config = GenerateConfig(max_tokens=8, temperature=0.0)
    chat = [ChatMessageUser(content="Please add 2 and 3 with the tool. " * 20)]
    first = asyncio.run(model.generate(chat, tools=[add], config=config))
    chat += [first.message, ChatMessageUser(content="Now just say done.")]
    last = asyncio.run(model.generate(chat, tools=[add], tool_choice="none", config=config))
    assert not last.message.tool_calls
    assert last.usage is not None and first.usage is not None
    aligned = first.usage.input_tokens // BLOCK * BLOCK - BLOCK
    assert (last.usage.input_tokens_cache_read or 0) >= aligned
