"""Tool-call validity counts: parse errors and refused calls are malformed, the rest valid."""

from __future__ import annotations

from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser
from inspect_ai.scorer import SampleScore, Score
from inspect_ai.tool import ToolCall, ToolCallError

from harness.tool_validity import (
    calls_per_sample,
    samples_with_calls,
    tool_call_counts,
    valid_rate,
)


def _transcript() -> list:
    ok = ToolCall(id="a", function="add", arguments={"x": 1, "y": 2})
    bad_json = ToolCall(id="b", function="add", arguments={}, parse_error="not JSON")
    unknown = ToolCall(id="c", function="nope", arguments={})
    failing = ToolCall(id="d", function="add", arguments={"x": "one"})
    return [
        ChatMessageUser(content="1+2?"),
        ChatMessageAssistant(content="", tool_calls=[ok, bad_json, unknown, failing]),
        ChatMessageTool(content="3", tool_call_id="a", function="add"),
        ChatMessageTool(content="", tool_call_id="b", function="add",
                        error=ToolCallError("parsing", "not JSON")),
        ChatMessageTool(content="", tool_call_id="c", function="nope",
                        error=ToolCallError("parsing", "Tool nope not found")),
        # the tool ran and failed on its own: the call itself was well-formed
        ChatMessageTool(content="", tool_call_id="d", function="add",
                        error=ToolCallError("unknown", "x must be an integer")),
    ]


def test_counts_split_malformed_from_valid() -> None:
    assert tool_call_counts(_transcript()) == {"calls": 4, "valid": 2, "malformed": 2}
    assert tool_call_counts([ChatMessageUser(content="hi")]) == {
        "calls": 0, "valid": 0, "malformed": 0}


def test_pooled_rate_weights_samples_by_their_calls() -> None:
    scores = [SampleScore(score=Score(value={"calls": 4, "valid": 2, "malformed": 2})),
              SampleScore(score=Score(value={"calls": 0, "valid": 0, "malformed": 0})),
              SampleScore(score=Score(value={"calls": 1, "valid": 1, "malformed": 0}))]
    assert valid_rate()(scores) == 3 / 5
    assert samples_with_calls()(scores) == 2 / 3
    assert calls_per_sample()(scores) == 5 / 3


def test_benchmark_logs_carry_the_validity_score(tmp_path) -> None:
    """The arithmetic benchmark's react agent with a scripted model that calls its tool."""
    from inspect_ai import eval as inspect_eval

    import harness.models.providers  # noqa: F401

    log = inspect_eval("benchmarks/arithmetic", model="scripted/arith-oracle",
                       task_args={"n": 3}, log_dir=str(tmp_path), display="none")[0]
    assert log.status == "success"
    names = [s.name for s in log.results.scores]  # type: ignore[union-attr]
    assert "tool_call_validity" in names
    sample = log.samples[0]  # type: ignore[index]
    counts = sample.scores["tool_call_validity"].value  # type: ignore[index]
    made = sum(len(m.tool_calls or []) for m in sample.messages if m.role == "assistant")
    assert counts["calls"] == made > 0 and counts["malformed"] == 0
