"""The ``scripted/<policy>`` provider: direct generate calls and full react() evals, offline."""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task, eval
from inspect_ai.agent import react
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
    get_model,
)
from inspect_ai.scorer import includes
from inspect_ai.tool import Tool, ToolInfo, tool

import harness.models.providers  # noqa: F401  (registers scripted/ even if the registry is broken)
from harness.models.scripted import (
    ScriptedModelAPI,
    count_words,
    get_policy,
    list_policies,
    scripted_policy,
)


@pytest.fixture(autouse=True)
def no_tiktoken(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any tiktoken use would download an encoding offline and fail: make it fail loudly."""
    tiktoken = pytest.importorskip("tiktoken")

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("tiktoken must not be used by scripted/")

    monkeypatch.setattr(tiktoken, "get_encoding", boom)
    monkeypatch.setattr(tiktoken, "encoding_for_model", boom)


def generate(model: str, prompt: str, **args: Any) -> ModelOutput:
    return asyncio.run(get_model(model, memoize=False, **args).generate(prompt))


@tool
def lookup() -> Tool:
    async def execute(key: str) -> str:
        """Look up the value stored under a key.

        Args:
            key: The key to look up.
        """
        return {"capital": "Paris", "river": "Seine"}[key]

    return execute


def run(model: str, samples: list[Sample], tmp_path: Path, **kwargs: Any) -> EvalLog:
    task = Task(dataset=samples, solver=react(tools=[lookup()]), scorer=includes(), **kwargs)
    [log] = eval(task, model=model, log_dir=str(tmp_path), display="none", **_model_args(kwargs))
    assert log.status == "success", log.error
    return log


def _model_args(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {"model_args": kwargs.pop("model_args")} if "model_args" in kwargs else {}


def messages(log: EvalLog) -> list[ChatMessage]:
    assert log.samples
    return log.samples[0].messages


# ----------------------------------------------------------------------------- direct calls


def test_echo_repeats_last_user_message_with_usage() -> None:
    out = generate("scripted/echo", "the quick brown fox")
    assert out.completion == "the quick brown fox"
    assert out.usage is not None
    assert (out.usage.input_tokens, out.usage.output_tokens) == (4, 4)
    assert out.usage.total_tokens == 8


def test_fixed_answer_rejoins_inspects_comma_split() -> None:
    # `-M answer=Paris, France` reaches the model as a list (Inspect splits on commas)
    assert (
        generate("scripted/fixed", "q", answer=["Paris", " France"]).completion == "Paris, France"
    )
    assert generate("scripted/fixed", "q", answer=42).completion == "42"


def test_refuse_sets_content_filter() -> None:
    out = generate("scripted/refuse", "do something bad")
    assert out.stop_reason == "content_filter"
    assert out.completion and out.usage is not None


def test_count_tokens_uses_the_whitespace_rule() -> None:
    model = get_model("scripted/echo", memoize=False)
    assert asyncio.run(model.count_tokens([ChatMessageUser(content="one two  three\nfour")])) >= 4
    assert asyncio.run(model.api.count_text_tokens("one two  three\nfour")) == 4
    assert count_words("") == 0


def test_unknown_policy_lists_known_ones() -> None:
    model = get_model("scripted/no-such-policy", memoize=False)
    with pytest.raises(ValueError, match="echo"):
        asyncio.run(model.generate("hi"))
    assert {"echo", "fixed", "tool-then-answer", "malformed", "refuse"} <= set(list_policies())


def test_invalid_policy_names_are_rejected() -> None:
    with pytest.raises(ValueError):
        scripted_policy("a/b")


def test_custom_policies_sync_async_and_tool_calls() -> None:
    seen: dict[str, Any] = {}

    @scripted_policy("test-oracle")
    def oracle(
        input: list[ChatMessage],
        tools: list[ToolInfo],
        config: GenerateConfig,
        args: dict[str, Any],
    ) -> str:
        seen.update(args=args, tools=[t.name for t in tools], temperature=config.temperature)
        return f"oracle says {args['x']}"

    @scripted_policy("test-async")
    async def later(
        input: list[ChatMessage],
        tools: list[ToolInfo],
        config: GenerateConfig,
        args: dict[str, Any],
    ) -> ModelOutput:
        await asyncio.sleep(0)
        return ModelOutput.from_content(model="", content="async ok")

    assert get_policy("test-oracle") is oracle
    model = get_model(
        "scripted/test-oracle", memoize=False, config=GenerateConfig(temperature=0.3), x=7
    )
    out = asyncio.run(model.generate("hi", tools=[lookup()]))
    assert out.completion == "oracle says 7"
    assert seen == {"args": {"x": 7}, "tools": ["lookup"], "temperature": 0.3}
    assert generate("scripted/test-async", "hi").completion == "async ok"


def test_policy_module_is_imported_before_lookup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "my_oracle_policies.py").write_text(
        textwrap.dedent(
            """
            from harness.models.scripted import scripted_policy

            @scripted_policy("from-module")
            def policy(input, tools, config, args):
                return "registered by import"
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "my_oracle_policies", raising=False)
    out = generate("scripted/from-module", "hi", policy_module="my_oracle_policies")
    assert out.completion == "registered by import"


def test_scripted_api_is_the_registered_class() -> None:
    assert isinstance(get_model("scripted/echo", memoize=False).api, ScriptedModelAPI)


# ----------------------------------------------------------------------------- react() evals


def test_tool_then_answer_through_react_and_submit(tmp_path: Path) -> None:
    log = run(
        "scripted/tool-then-answer",
        [Sample(input="What is the capital of France?", target="Paris")],
        tmp_path,
        model_args={"tool": "lookup", "arguments": '{"key": "capital"}'},
    )
    assert log.results and log.results.scores[0].metrics["accuracy"].value == 1.0
    calls = [
        c for m in messages(log) if isinstance(m, ChatMessageAssistant) for c in m.tool_calls or []
    ]
    assert [(c.function, c.arguments) for c in calls][0] == ("lookup", {"key": "capital"})
    results = [m for m in messages(log) if isinstance(m, ChatMessageTool)]
    assert results[0].text == "Paris"
    assert log.samples and log.samples[0].output.completion == "Paris"
    usage = log.stats.model_usage["scripted/tool-then-answer"]
    assert usage.input_tokens > 0 and usage.output_tokens > 0


def test_tool_then_answer_template_and_dict_arguments(tmp_path: Path) -> None:
    log = run(
        "scripted/tool-then-answer",
        [Sample(input="Which river?", target="the Seine")],
        tmp_path,
        model_args={"arguments": {"key": "river"}, "template": "It is the {result}."},
    )
    assert log.samples and log.samples[0].output.completion == "It is the Seine."


def test_sequence_scripts_a_trajectory(tmp_path: Path) -> None:
    steps = [
        {"tool": "lookup", "arguments": {"key": "river"}},
        {"tool": "lookup", "arguments": {"key": "capital"}},
        {"tool": "submit", "arguments": {"answer": "Seine and Paris"}},
    ]
    log = run(
        "scripted/sequence",
        [Sample(input="Two facts", target="Paris")],
        tmp_path,
        model_args={"steps": json.dumps(steps)},
    )
    tool_texts = [m.text for m in messages(log) if isinstance(m, ChatMessageTool)]
    assert tool_texts[:2] == ["Seine", "Paris"]
    assert log.samples and log.samples[0].output.completion == "Seine and Paris"


def test_malformed_call_gets_a_parsing_error_back(tmp_path: Path) -> None:
    log = run(
        "scripted/malformed",
        [Sample(input="q", target="done")],
        tmp_path,
        model_args={"tool": "lookup", "answer": "done"},
    )
    errors = [m.error for m in messages(log) if isinstance(m, ChatMessageTool) and m.error]
    assert errors and errors[0].type == "parsing"
    assert log.samples and log.samples[0].output.completion == "done"


def test_unknown_tool_is_reported_to_the_model(tmp_path: Path) -> None:
    log = run(
        "scripted/unknown-tool",
        [Sample(input="q", target="ok")],
        tmp_path,
        model_args={"answer": "ok"},
    )
    tool_messages = [m for m in messages(log) if isinstance(m, ChatMessageTool)]
    assert tool_messages[0].function == "no_such_tool"
    assert tool_messages[0].error is not None
    assert log.samples and log.samples[0].output.completion == "ok"


def test_chatter_never_submits_and_hits_the_message_limit(tmp_path: Path) -> None:
    log = run("scripted/chatter", [Sample(input="q", target="x")], tmp_path, message_limit=8)
    assert log.samples
    sample = log.samples[0]
    assert sample.limit is not None and sample.limit.type == "message"
    said = [m.text for m in sample.messages if isinstance(m, ChatMessageAssistant)]
    assert said[:2] == ["turn 0", "turn 1"]


def test_two_samples_run_concurrently_and_deterministically(tmp_path: Path) -> None:
    samples = [Sample(input=f"say {i}", target=f"say {i}") for i in range(2)]
    task = Task(dataset=samples, scorer=includes())
    [first] = eval(task, model="scripted/echo", log_dir=str(tmp_path), display="none")
    [second] = eval(task, model="scripted/echo", log_dir=str(tmp_path), display="none")
    assert first.results and first.results.scores[0].metrics["accuracy"].value == 1.0
    assert first.samples and second.samples
    assert [s.output.completion for s in first.samples] == [
        s.output.completion for s in second.samples
    ]
