"""Prompt cost per model call: read from a sample's model events, carried by CausalGame's logs."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from harness.prompt_cost import PROMPT_COST_SCORER, prompt_cost_values, prompt_lengths
from harness.tool_validity import is_auxiliary


def _model_event(input_tokens: int | None, texts: list[str]) -> SimpleNamespace:
    usage = None if input_tokens is None else SimpleNamespace(input_tokens=input_tokens)
    return SimpleNamespace(event="model", output=SimpleNamespace(usage=usage),
                           input=[SimpleNamespace(text=t) for t in texts])


def test_lengths_take_the_providers_count_else_characters_over_four() -> None:
    events = [
        _model_event(120, ["ignored when usage is given"]),
        SimpleNamespace(event="tool"),
        _model_event(None, ["x" * 40, "y" * 9]),
        _model_event(0, ["z" * 8]),  # a provider that reports 0 tokens is treated as none
    ]
    assert prompt_lengths(events) == [120, 12, 2]


def test_values_are_mean_max_and_count_and_zero_without_calls() -> None:
    assert prompt_cost_values([100, 300, 200]) == {
        "prompt_tokens": 200.0, "prompt_tokens_max": 300.0, "model_calls": 3.0}
    assert prompt_cost_values([]) == {
        "prompt_tokens": 0.0, "prompt_tokens_max": 0.0, "model_calls": 0.0}


def test_it_is_a_diagnostic_never_a_headline() -> None:
    assert is_auxiliary(PROMPT_COST_SCORER)
    assert is_auxiliary("prompt_cost/prompt_tokens")
    assert not is_auxiliary("prompt_costly")
    assert not is_auxiliary("causalgame_scorer/survival")


def test_causalgame_logs_carry_one_length_per_model_call(tmp_path: Path) -> None:
    """A react agent over CausalGame's tools, played by the scripted experimenter: every
    reply is one call, and the context only grows, so the lengths never fall."""
    from inspect_ai import eval as inspect_eval

    import harness.models.providers  # noqa: F401
    from methods.agents.memory_react import task_react

    log = inspect_eval("benchmarks/causalgame", model="scripted/lightwm-quick-experimenter",
                       task_args={"scenarios": "weather_noise", "epochs": 1, "sandbox": "none"},
                       solver=task_react(max_turns=4), log_dir=str(tmp_path),
                       display="none")[0]
    assert log.status == "success"
    sample = log.samples[0]  # type: ignore[index]
    score = sample.scores[PROMPT_COST_SCORER]  # type: ignore[index]
    per_call = score.metadata["prompt_tokens_per_call"]  # type: ignore[index]
    replies = [m for m in sample.messages if m.role == "assistant"]
    assert score.value["model_calls"] == len(per_call) == len(replies) > 1  # type: ignore[index]
    assert per_call == sorted(per_call) and per_call[0] > 0
    assert score.value["prompt_tokens_max"] == max(per_call)  # type: ignore[index]
    assert score.value["prompt_tokens"] == sum(per_call) / len(per_call)  # type: ignore[index]
