"""Schema induction: from hand-made traces, and from real Inspect logs through the CLI entry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval

from benchmarks.causalgame.causalgame import causalgame
from methods.agents.memory_react import task_react
from methods.lightwm.__main__ import main
from methods.lightwm.induce import Step, Trace, induce_schema, trace_from_messages
from methods.lightwm.schema import load_schema


def _trace(city: str, hotels: list[str]) -> Trace:
    steps = [Step("search_hotels", {"city": city}, f'[{{"id": "{hotels[0]}"}}]')]
    steps += [Step("get_details", {"id": h}, f'{{"id": "{h}", "price": 90}}') for h in hotels]
    steps.append(Step("book", {"id": hotels[0], "name": "Traveller"}, '{"ok": true}'))
    return Trace(goal=f"Plan a trip.\nCity: {city}\nNights: 2", steps=steps)


def test_induction_finds_the_sequence_repeats_data_flow_and_init_rules() -> None:
    traces = [_trace("AVA", ["AVA-H1", "AVA-H2"]), _trace("BRI", ["BRI-H9"]),
              Trace(goal="City: COR\nNights: 1", steps=[Step("book", {"id": "COR-H1"}, "{}")])]
    schema = induce_schema(traces, "toy")
    assert [s.name for s in schema.subtasks] == ["1_search_hotels", "2_get_details", "3_book"]
    search, details, book = schema.subtasks
    assert search.finish == "produced" and search.produces == ["search_hotels_result"]
    assert details.finish == "model" and details.produces == ["get_details_results"]
    assert details.max_steps == 3  # longest run (2) + one step to finish
    assert details.updates[0].path == "/get_details_results/-"
    # get_details reuses ids that search returned; book reuses ids from both
    assert "search_hotels_result" in details.expects
    assert {"search_hotels_result", "get_details_results"} <= set(book.expects)
    assert [r.field for r in schema.init_rules] == ["city", "nights"]
    assert schema.fields["get_details_results"].type == "array"
    assert schema.traces == 3


def test_induction_needs_tool_calls() -> None:
    with pytest.raises(ValueError, match="no successful traces"):
        induce_schema([], "x")
    with pytest.raises(ValueError, match="no tool calls"):
        induce_schema([Trace(goal="g")], "x")


def test_trace_from_logged_messages_skips_submit_and_keeps_goal() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "Be good."},
        {"role": "user", "content": [{"type": "text", "text": "City: AVA"}]},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "function": "search", "arguments": {"q": "x"}},
            {"id": "c2", "function": "submit", "arguments": {"answer": "y"}}]},
        {"role": "tool", "tool_call_id": "c1", "function": "search", "content": "[1]"},
        {"role": "tool", "tool_call_id": "c2", "function": "submit", "content": "y"},
        {"role": "user", "content": "not part of the goal"},
    ]
    trace = trace_from_messages(messages)
    assert trace.goal == "Be good.\n\nCity: AVA"
    assert [(s.tool, s.arguments, s.observation) for s in trace.steps] == [
        ("search", {"q": "x"}, "[1]")]


def test_induce_from_real_logs_through_the_module_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logs = tmp_path / "logs"
    task = causalgame(epochs=1, sandbox="none",
                      scenarios="antenna_trap_high_def,antenna_trap_local_optima,weather_noise")
    inspect_eval(task, model="scripted/lightwm-experimenter", solver=task_react(),
                 log_dir=str(logs), display="none")
    out = tmp_path / "schemas"
    out.mkdir()
    assert main(["induce", "--traces", str(logs), "--out", str(out), "--family", "cg",
                 "--score", "victory"]) == 0
    assert "cg: 2 traces" in capsys.readouterr().out  # weather_noise is lost: not a trace
    schema = load_schema(out / "cg.json")
    assert [s.actions[0] for s in schema.subtasks] == [
        "get_action_space", "deploy_drone", "submit_final_design"]
    assert "get_action_space_result" in schema.subtasks[1].expects
    assert "deploy_drone_results" in schema.subtasks[2].expects
    assert main(["induce", "--traces", str(logs), "--out", str(out / "x.json"),
                 "--score", "victory", "--threshold", "2"]) == 1
    # the suite's CLI runs the same induction
    from typer.testing import CliRunner

    from harness.cli import app

    result = CliRunner().invoke(app, ["method", "lightwm", "induce", "--traces", str(logs),
                                      "--out", str(out / "cli.json"), "--score", "victory"])
    assert result.exit_code == 0, result.output
    assert "2 traces" in result.output
    assert load_schema(out / "cli.json").subtasks == schema.subtasks
