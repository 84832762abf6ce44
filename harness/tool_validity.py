"""Tool-call validity: how many of a model's calls were well-formed, per sample and pooled.

Why a scorer of its own: an agent benchmark's score mixes "the model could not operate the
tools" with "the model operated them and chose badly". Every agentic benchmark adds
:func:`tool_call_validity` next to its own scorer, so a leaderboard row says both.

A call is **malformed** when the model's reply could not be turned into a call (the parser's
``parse_error``) or Inspect refused it before running it (an unknown tool or arguments that
fail the tool's schema: a ``ToolCallError`` of type ``parsing``); either way the error went
back to the model as the tool's result. Every other call is **valid**, including one whose
tool ran and reported an error of its own (the call was well-formed; the action failed).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState

from harness.prompt_cost import PROMPT_COST_SCORER

VALIDITY_SCORER = "tool_call_validity"
"""The score name every agentic benchmark's logs carry."""


AUXILIARY_SCORERS = (VALIDITY_SCORER, PROMPT_COST_SCORER)
"""Diagnostics an agentic benchmark carries beside its own score: this one and the prompt
cost of :mod:`harness.prompt_cost`."""


def is_auxiliary(score_key: str) -> bool:
    """Whether a results-frame score key is a diagnostic (:data:`AUXILIARY_SCORERS`) rather
    than a benchmark's own score: never the default response of an analysis or the headline
    of a board."""
    return any(score_key == name or score_key.startswith(name + "/")
               for name in AUXILIARY_SCORERS)


def tool_call_counts(messages: Sequence[ChatMessage]) -> dict[str, int]:
    """``calls``, ``valid`` and ``malformed`` in one transcript."""
    refused: set[str] = set()
    for message in messages:
        if isinstance(message, ChatMessageTool) and message.error is not None:
            if message.error.type == "parsing" and message.tool_call_id:
                refused.add(message.tool_call_id)
    calls = malformed = 0
    for message in messages:
        if not isinstance(message, ChatMessageAssistant):
            continue
        for call in message.tool_calls or []:
            calls += 1
            if call.parse_error is not None or call.id in refused:
                malformed += 1
    return {"calls": calls, "valid": calls - malformed, "malformed": malformed}


def _value(score: SampleScore, key: str) -> float:
    value: Any = score.score.value
    return float(value.get(key, 0)) if isinstance(value, dict) else 0.0


@metric
def valid_rate() -> Metric:
    """Pooled share of valid calls over every call of every sample (0 when none was made)."""

    def compute(scores: list[SampleScore]) -> float:
        calls = sum(_value(s, "calls") for s in scores)
        return sum(_value(s, "valid") for s in scores) / calls if calls else 0.0

    return compute


@metric
def samples_with_calls() -> Metric:
    """Share of samples in which the model made at least one call."""

    def compute(scores: list[SampleScore]) -> float:
        if not scores:
            return 0.0
        return sum(_value(s, "calls") > 0 for s in scores) / len(scores)

    return compute


def _mean_of(key: str) -> Metric:
    def compute(scores: list[SampleScore]) -> float:
        return sum(_value(s, key) for s in scores) / len(scores) if scores else 0.0

    return compute


@metric
def calls_per_sample() -> Metric:
    """Mean number of calls a sample made."""
    return _mean_of("calls")


@metric
def malformed_per_sample() -> Metric:
    """Mean number of malformed calls a sample made (each returned to the model)."""
    return _mean_of("malformed")


@scorer(metrics=[valid_rate(), samples_with_calls(), calls_per_sample(),
                 malformed_per_sample()], name=VALIDITY_SCORER)
def tool_call_validity() -> Scorer:
    """Counts of valid and malformed tool calls in the sample's transcript."""

    async def score(state: TaskState, target: Target) -> Score:
        counts = tool_call_counts(state.messages)
        rate = counts["valid"] / counts["calls"] if counts["calls"] else 0.0
        return Score(value={**counts, "rate": rate},
                     explanation=f"{counts['valid']} valid, {counts['malformed']} malformed "
                                 f"of {counts['calls']} calls")

    return score
