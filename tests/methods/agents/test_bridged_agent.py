"""The bridged LangGraph agent: its model calls reach the eval's model through Inspect's
agent bridge, its tool calls reach the task's tools, and the conversation lands in the log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import includes
from inspect_ai.solver import use_tools
from inspect_ai.tool import Tool, ToolError, tool

pytest.importorskip("langgraph")
pytest.importorskip("langchain_openai")

from methods.agents.bridged import STORE_KEY, langgraph_react, tool_text  # noqa: E402

CALLS: list[tuple[int, int]] = []


@tool
def multiply() -> Tool:
    async def execute(a: int, b: int) -> str:
        """Multiply two integers.

        Args:
            a: The first factor.
            b: The second factor.
        """
        if a < 0:
            raise ToolError("negative factors are not allowed")
        CALLS.append((a, b))
        return str(a * b)

    return execute


def _with_usage(output: ModelOutput) -> ModelOutput:
    """mockllm counts missing usage with tiktoken, which would download an encoding."""
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return output


def _run(outputs: list[ModelOutput], log_dir: Path, max_turns: int = 5) -> Any:
    CALLS.clear()
    outputs = [_with_usage(o.model_copy(deep=True)) for o in outputs]
    task = Task(dataset=[Sample(id="m1", input="What is 6 times 7? Use the tool.", target="42")],
                solver=[use_tools(multiply()), langgraph_react(max_turns=max_turns)],
                scorer=includes())
    model = get_model("mockllm/model", custom_outputs=outputs)
    [log] = eval(task, model=model, display="none", log_dir=str(log_dir))
    return log


def test_the_agent_calls_the_task_tool_through_the_bridge(tmp_path: Path) -> None:
    outputs = [
        ModelOutput.for_tool_call("mockllm/model", "multiply", {"a": 6, "b": 7}),
        ModelOutput.from_content("mockllm/model", "The product is 42."),
    ]
    log = _run(outputs, tmp_path)
    assert log.status == "success", log.error
    assert CALLS == [(6, 7)]  # the LangChain tool ran the Inspect tool
    sample = log.samples[0]
    roles = [m.role for m in sample.messages]
    assert roles.count("assistant") == 2 and "tool" in roles
    tool_message = next(m for m in sample.messages if m.role == "tool")
    assert tool_message.text == "42"
    assert sample.scores["includes"].value == "C"
    assert sample.store[STORE_KEY] == {"framework": "langgraph", "turns": 2,
                                       "stopped_by_budget": False}


def test_a_tool_error_reaches_the_agent_as_text_and_the_budget_stops_it(tmp_path: Path) -> None:
    outputs = [ModelOutput.for_tool_call("mockllm/model", "multiply", {"a": -1, "b": 2})] * 10
    log = _run(outputs, tmp_path, max_turns=3)
    assert log.status == "success", log.error
    sample = log.samples[0]
    tool_texts = [m.text for m in sample.messages if m.role == "tool"]
    assert tool_texts and all("negative factors are not allowed" in t for t in tool_texts)
    assert CALLS == []
    assert sample.store[STORE_KEY]["stopped_by_budget"] is True


def test_tool_text_joins_content_parts() -> None:
    class Part:
        text = "a"

    assert tool_text([Part(), Part()]) == "a\na"
    assert tool_text(3) == "3"
