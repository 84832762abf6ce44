"""The ReAct baselines: plain react over the task's tools, and react with a running summary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
)
from inspect_ai.solver import Solver
from inspect_ai.tool import ToolCall, ToolInfo

from benchmarks.causalgame.causalgame import causalgame
from harness.models.scripted import PolicyResult, scripted_policy
from methods.agents.memory_react import MEMORY_HEADER, memory_react, render_events, task_react
from methods.lightwm.policies import experimenter_step

SCENARIOS = "antenna_trap_high_def,weather_noise"


@scripted_policy("test-forgetful-summariser")
def forgetful(
    input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig, args: dict[str, Any]
) -> PolicyResult:
    """The experimenter, but its summaries keep nothing."""
    if input[0].text.startswith("[memory:summarise]"):
        return "Some steps happened."
    return experimenter_step(input, tools, args)


def _run(tmp: Path, model: str, solver: Solver) -> EvalLog:
    task = causalgame(epochs=1, sandbox="none", scenarios=SCENARIOS)
    log = inspect_eval(task, model=model, solver=solver, log_dir=str(tmp), display="none")[0]
    assert log.status == "success", log.error
    return read_eval_log(log.location, resolve_attachments=True)


def _finals(log: EvalLog) -> dict[str, Any]:
    return {str(s.id): next(iter((s.scores or {}).values())).answer for s in log.samples or []}


def test_render_events_flattens_calls_and_results() -> None:
    messages: list[ChatMessage] = [
        ChatMessageAssistant(content="thinking", tool_calls=[
            ToolCall(id="1", function="deploy", arguments={"n": 2})]),
        ChatMessageTool(content='{\n "survived": 3\n}\n\nReflect.', tool_call_id="1",
                        function="deploy"),
        ChatMessageUser(content="keep going"),
    ]
    assert render_events(messages).splitlines() == [
        "SAY thinking", 'CALL deploy {"n": 2}', 'RESULT deploy: {"survived":3} Reflect.',
        "NOTE keep going"]


def test_react_over_task_tools_uses_the_tasks_tools_and_submits(tmp_path: Path) -> None:
    log = _run(tmp_path, "scripted/lightwm-experimenter", task_react())
    for sample in log.samples or []:
        tools = [m.function for m in sample.messages if m.role == "tool"]
        assert tools[0] == "get_action_space" and "submit_final_design" in tools
        assert "Report:" in sample.output.completion  # react's submit() carried the report


def test_memory_shows_a_summary_and_a_window_never_an_orphan_result(tmp_path: Path) -> None:
    window = 4
    log = _run(tmp_path, "scripted/lightwm-experimenter", memory_react(window=window))
    sample = (log.samples or [])[0]
    calls = [e for e in sample.events if e.event == "model"]
    summaries = [e for e in calls if e.input[0].text.startswith("[memory:summarise]")]
    actions = [e for e in calls if e not in summaries]
    assert summaries, "messages fell out of the window but no summary was written"
    late = actions[-1].input
    assert any(m.text.startswith(MEMORY_HEADER) for m in late)
    after = [i for i, m in enumerate(late) if m.text.startswith(MEMORY_HEADER)][0] + 1
    assert len(late) - after <= window + 1
    assert not isinstance(late[after], ChatMessageTool)
    # the full conversation is still what the log keeps
    assert sum(m.role == "tool" for m in sample.messages) > window


@pytest.mark.slow
def test_memory_carries_the_facts_the_window_drops(tmp_path: Path) -> None:
    """Same scripted experimenter, same decisions: with memory the run matches plain react
    even though most experiments are outside the window when it submits; with a window and
    no summary (a summariser that forgets) it cannot reach the same submission."""
    plain = _finals(_run(tmp_path / "plain", "scripted/lightwm-experimenter", task_react()))
    mem = _finals(_run(tmp_path / "mem", "scripted/lightwm-experimenter", memory_react(window=4)))
    assert mem == plain
    assert all(v not in (None, "null") for v in plain.values())
    forget = _finals(_run(tmp_path / "forget", "scripted/test-forgetful-summariser",
                          memory_react(window=4, max_turns=14)))
    assert forget != plain
