"""``embedded/smollm2-135m``: real llama.cpp generation through Inspect, fully offline."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    Model,
    get_model,
)
from inspect_ai.scorer import includes
from inspect_ai.solver import generate
from inspect_ai.tool import ToolFunction, ToolInfo, ToolParam, ToolParams

import harness.models.providers  # noqa: F401  (registers embedded/)

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None,
    reason="llama-cpp-python is not installed (pip install llama-cpp-python==0.3.36)",
)

ADD = ToolInfo(
    name="add",
    description="Add two integers and return the sum.",
    parameters=ToolParams(
        properties={
            "x": ToolParam(type="integer", description="first number"),
            "y": ToolParam(type="integer", description="second number"),
        },
        required=["x", "y"],
    ),
)
GREEDY = GenerateConfig(temperature=0.0, max_tokens=48, seed=7)


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="module")
def model() -> Model:
    return get_model("embedded/smollm2-135m")


def test_answers_a_real_prompt_offline(model: Model) -> None:
    out = asyncio.run(model.generate("What is the capital of France?", config=GREEDY))
    assert out.completion.strip()
    assert out.usage is not None
    assert out.usage.input_tokens > 5 and 0 < out.usage.output_tokens <= 48
    assert out.stop_reason in ("stop", "max_tokens")


def test_same_seed_same_text(model: Model) -> None:
    config = GenerateConfig(temperature=0.8, max_tokens=24, seed=123)
    first = asyncio.run(model.generate("Tell me a story.", config=config))
    second = asyncio.run(model.generate("Tell me a story.", config=config))
    assert first.completion == second.completion


@pytest.mark.slow
def test_default_sampling_is_repeatable_in_any_order(model: Model) -> None:
    """No seed given, default temperature: each reply depends only on its prompt, so the
    same prompts in another order (as concurrent samples arrive) give the same replies."""
    config = GenerateConfig(max_tokens=24)
    prompts = ["Name a colour.", "Count to five.", "Tell me a story."]

    def replies(order: list[str]) -> dict[str, str]:
        return {p: asyncio.run(model.generate(p, config=config)).completion for p in order}

    first = replies(prompts)
    assert replies(list(reversed(prompts))) == first
    # the config seed still enters: another seed, another sampling chain for the prompt
    from harness.models._common import call_seed

    assert call_seed("Tell me a story.", 99) != call_seed("Tell me a story.", None)
    assert call_seed("Tell me a story.", None) == call_seed("Tell me a story.", None)


def test_max_tokens_and_stop_sequences(model: Model) -> None:
    out = asyncio.run(
        model.generate("Count from 1 to 20.", config=GenerateConfig(temperature=0, max_tokens=3))
    )
    assert out.usage is not None and out.usage.output_tokens == 3
    assert out.stop_reason == "max_tokens"
    stopped = asyncio.run(
        model.generate(
            "Count from 1 to 20, separated by commas.",
            config=GenerateConfig(temperature=0, max_tokens=40, stop_seqs=[","]),
        )
    )
    assert "," not in stopped.completion


def test_count_tokens_uses_the_gguf_tokenizer(model: Model) -> None:
    ids = asyncio.run(model.api.tokenize("Hello world"))
    assert ids == [19556, 905]
    assert asyncio.run(model.api.count_text_tokens("Hello world")) == 2


def test_prompt_longer_than_context_is_model_length() -> None:
    small = get_model("embedded/smollm2-135m", n_ctx=256, memoize=False)
    out = asyncio.run(small.generate("word " * 400, config=GREEDY))
    assert out.stop_reason == "model_length"
    # nothing was evaluated: no usage (as a hosted API's context-length error), the
    # refused length is in the output's metadata
    assert out.usage is not None and out.usage.input_tokens == 0
    assert out.metadata is not None and out.metadata["refused_prompt_tokens"] > 256
    assert out.metadata["context_window"] == 256


def test_model_path_serves_any_local_gguf() -> None:
    from harness.models.weights import smollm2_gguf

    other = get_model("embedded/my-gguf", model_path=str(smollm2_gguf()), memoize=False)
    out = asyncio.run(other.generate("Say hello.", config=GREEDY))
    assert out.completion.strip()


@pytest.mark.slow
def test_forced_tool_call_round_trip(model: Model) -> None:
    question: list[ChatMessage] = [ChatMessageUser(content="What is 17 + 25? Use the add tool.")]
    out = asyncio.run(
        model.generate(question, tools=[ADD], tool_choice=ToolFunction("add"), config=GREEDY)
    )
    calls = out.message.tool_calls
    assert calls and len(calls) == 1
    call = calls[0]
    assert call.parse_error is None
    assert call.function == "add"
    assert set(call.arguments) == {"x", "y"}
    assert all(isinstance(v, int) for v in call.arguments.values())
    assert out.stop_reason == "tool_calls"
    # feed the result back: the model now answers in text (tool_choice none)
    history: list[ChatMessage] = [
        *question,
        out.message,
        ChatMessageTool(content="42", tool_call_id=call.id, function="add"),
    ]
    final = asyncio.run(model.generate(history, tools=[ADD], tool_choice="none", config=GREEDY))
    assert final.completion.strip()
    assert not final.message.tool_calls


def test_eval_two_samples_logs_usage(tmp_path: Path) -> None:
    task = Task(
        dataset=[
            Sample(input="What is the capital of France?", target="Paris"),
            Sample(input="What is 2 + 2?", target="4"),
        ],
        solver=generate(),
        scorer=includes(),
        config=GenerateConfig(max_tokens=32, seed=1),
    )
    [log] = eval(task, model="embedded/smollm2-135m", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    assert log.samples and len(log.samples) == 2
    assert all(s.output.completion.strip() for s in log.samples)
    usage = log.stats.model_usage["embedded/smollm2-135m"]
    assert usage.input_tokens > 10 and usage.output_tokens > 0
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens
    assert list(tmp_path.glob("*.eval"))


def test_unknown_model_args_are_rejected() -> None:
    with pytest.raises(ValueError, match="unknown model args"):
        get_model("embedded/smollm2-135m", nctx=4096, memoize=False)
