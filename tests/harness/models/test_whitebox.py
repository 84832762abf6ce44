"""White-box SmolLM2 via transformers: the dequantised copy, activations, KV cache, providers.

Slow: the first run dequantises the GGUF (~25 s) into ``$EVALSUITE_CACHE`` (default
``~/.cache/evalsuite``); later runs reuse it.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import GenerateConfig, get_model

import harness.models.providers  # noqa: F401  (registers whitebox/)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("torch") is None
        or importlib.util.find_spec("transformers") is None
        or importlib.util.find_spec("gguf") is None,
        reason="needs the cpu extra: torch, transformers, gguf",
    ),
]

PROMPTS = [
    "The capital of France is",
    "1, 2, 3, 4, 5,",
    "The opposite of hot is",
    "Monday, Tuesday, Wednesday,",
]


@pytest.fixture(scope="module", autouse=True)
def offline() -> Any:
    patch = pytest.MonkeyPatch()
    patch.setenv("HF_HUB_OFFLINE", "1")
    patch.setenv("TRANSFORMERS_OFFLINE", "1")
    yield
    patch.undo()


@pytest.fixture(scope="module")
def folder(offline: None) -> Path:
    from harness.models.whitebox import ensure_hf_copy

    return ensure_hf_copy()


@pytest.fixture(scope="module")
def lm(folder: Path) -> Any:
    from harness.models.whitebox import WhiteBoxLM

    return WhiteBoxLM.load(folder)


def test_copy_is_a_plain_hf_folder_and_is_reused(folder: Path) -> None:
    from harness.models.whitebox import ensure_hf_copy

    assert (folder / "model.safetensors").is_file()
    config = json.loads((folder / "config.json").read_text())
    assert "quantization_config" not in config
    assert config["tie_word_embeddings"] is True
    tokenizer_config = json.loads((folder / "tokenizer_config.json").read_text())
    assert "local_files_only" not in tokenizer_config and "is_local" not in tokenizer_config
    assert tokenizer_config["model_max_length"] == config["max_position_embeddings"]
    stamp = (folder / "model.safetensors").stat().st_mtime_ns
    assert ensure_hf_copy() == folder
    assert (folder / "model.safetensors").stat().st_mtime_ns == stamp


def test_tied_embeddings_survive_the_round_trip(lm: Any) -> None:
    import torch

    head = lm.model.get_output_embeddings().weight
    embed = lm.model.get_input_embeddings().weight
    assert torch.equal(head, embed)


def test_logits_shape(lm: Any) -> None:
    import torch

    ids = lm.encode(PROMPTS[0])
    logits = lm.logits(PROMPTS[0])
    assert logits.shape == (ids.shape[1], lm.model.config.vocab_size)
    assert torch.isfinite(logits).all()


def test_hidden_states_count_and_selection(lm: Any) -> None:
    import torch

    states = lm.hidden_states(PROMPTS[0])
    assert len(states) == lm.n_layers + 1 == 31
    seq = lm.encode(PROMPTS[0]).shape[1]
    assert all(s.shape == (seq, lm.model.config.hidden_size) for s in states)
    first, last = lm.hidden_states(PROMPTS[0], layers=[0, -1])
    assert torch.equal(first, states[0]) and torch.equal(last, states[-1])
    assert not torch.equal(states[1], states[2])


def test_kv_cache_continuation_matches_full_forward(lm: Any) -> None:
    import torch

    prefix, suffix = "The capital of France is", " Paris, and the capital of Italy is"
    whole = lm.encode(prefix + suffix)
    assert torch.equal(whole, torch.cat([lm.encode(prefix), lm.encode(suffix)], dim=1))
    cache = lm.cache_of(lm.forward(prefix))
    assert cache is not None and cache.get_seq_length() == lm.encode(prefix).shape[1]
    continued = lm.forward(suffix, cache=cache)
    assert cache.get_seq_length() == whole.shape[1]
    full = lm.logits(prefix + suffix)
    assert torch.allclose(continued.logits[0, -1], full[-1], atol=1e-3)


def test_generate_and_returned_cache(lm: Any) -> None:
    chat = [{"role": "user", "content": "What is the capital of France?"}]
    out = lm.generate(chat, max_new_tokens=12, return_cache=True)
    assert out.text.strip()
    assert 0 < out.output_tokens <= 12
    assert out.cache is not None
    assert out.cache.get_seq_length() >= out.prompt_tokens + out.output_tokens - 1


def test_tokenizer_and_greedy_first_token_agree_with_llama_cpp(lm: Any) -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python not installed")
    from harness.models.embedded import load_llama
    from harness.models.weights import smollm2_gguf

    llama, lock = load_llama(smollm2_gguf())
    chat = lm.chat_prompt([{"role": "user", "content": "Hi!"}])
    for text in [*PROMPTS, chat]:
        expected = llama.tokenize(text.encode(), add_bos=False, special=True)
        assert lm.encode(text)[0].tolist() == expected, text
    compared = 0
    for prompt in PROMPTS:
        top2 = lm.logits(prompt)[-1].topk(2)
        margin = float(top2.values[0] - top2.values[1])
        if margin < 0.5:  # Q4_1 kernels vs dequantised fp32 may swap near-ties
            continue
        with lock:
            done = llama.create_completion(prompt, max_tokens=1, temperature=0.0)
        assert done["choices"][0]["text"] == lm.tokenizer.decode(top2.indices[:1]), prompt
        compared += 1
    assert compared >= 2


def test_whitebox_model_api(folder: Path) -> None:
    model = get_model("whitebox/smollm2-135m")
    out = asyncio.run(
        model.generate("What is 2 + 2?", config=GenerateConfig(max_tokens=16, seed=3))
    )
    assert out.completion.strip()
    assert out.usage is not None and out.usage.input_tokens > 5
    assert 0 < out.usage.output_tokens <= 16


def test_whitebox_forced_tool_call_parses(folder: Path) -> None:
    from inspect_ai.model import ChatMessageUser
    from inspect_ai.tool import ToolFunction, ToolInfo, ToolParam, ToolParams

    add = ToolInfo(
        name="add",
        description="Add two integers and return the sum.",
        parameters=ToolParams(
            properties={"x": ToolParam(type="integer"), "y": ToolParam(type="integer")},
            required=["x", "y"],
        ),
    )
    out = asyncio.run(
        get_model("whitebox/smollm2-135m").generate(
            [ChatMessageUser(content="What is 17 + 25? Use the add tool.")],
            tools=[add],
            tool_choice=ToolFunction("add"),
            config=GenerateConfig(temperature=0.0, max_tokens=32),
        )
    )
    assert out.stop_reason == "tool_calls"
    [call] = out.message.tool_calls or []
    assert call.function == "add" and call.parse_error is None
    assert set(call.arguments) <= {"x", "y"}


def test_inspects_hf_provider_loads_the_folder(folder: Path) -> None:
    model = get_model("hf/smollm2", model_path=str(folder), device="cpu", memoize=False)
    out = asyncio.run(
        model.generate(
            "What is the capital of France?",
            config=GenerateConfig(max_tokens=12, temperature=0.2, seed=1),
        )
    )
    assert out.completion.strip()
    assert out.usage is not None and out.usage.output_tokens > 0
