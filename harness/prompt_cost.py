"""Prompt cost: how many input tokens each model call of a sample sent, read from its transcript.

Why a scorer of its own: a working-memory method (LightWM, a running summary) claims shorter
prompts at equal success, so an agent benchmark has to say what every call cost, whatever
the agent's prompt layout. The lengths come from the sample's own model events (the
provider's ``usage.input_tokens``; characters / 4 when a provider gave none), so a
method's side calls (a schema fill, a summary) count like its action calls.

Score keys: ``prompt_tokens`` (mean input tokens per call), ``prompt_tokens_max`` (the
largest call) and ``model_calls``; the per-call list is in the score's metadata. Like
:mod:`harness.tool_validity` it is a diagnostic beside a benchmark's own score, never a
report's default response (:func:`harness.tool_validity.is_auxiliary`).
"""

from __future__ import annotations

from typing import Any

from inspect_ai.log import transcript
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState

PROMPT_COST_SCORER = "prompt_cost"
"""The score name an agentic benchmark's logs carry for it."""

__all__ = ["PROMPT_COST_SCORER", "prompt_cost", "prompt_cost_values", "prompt_lengths"]


def prompt_lengths(events: list[Any]) -> list[int]:
    """Input tokens of every model event (characters / 4 when a provider gave no usage)."""
    out: list[int] = []
    for event in events:
        if getattr(event, "event", None) != "model":
            continue
        usage = getattr(getattr(event, "output", None), "usage", None)
        tokens = getattr(usage, "input_tokens", None) if usage is not None else None
        if not tokens:
            chars = sum(len(getattr(m, "text", "") or "") for m in event.input)
            tokens = chars // 4
        out.append(int(tokens))
    return out


def prompt_cost_values(lengths: list[int]) -> dict[str, float]:
    """The three score keys of one sample's per-call lengths (zeros when it made no call)."""
    calls = len(lengths)
    return {
        "prompt_tokens": sum(lengths) / calls if calls else 0.0,
        "prompt_tokens_max": float(max(lengths, default=0)),
        "model_calls": float(calls),
    }


@scorer(metrics={"*": [mean(), stderr()]}, name=PROMPT_COST_SCORER)
def prompt_cost() -> Scorer:
    """Mean and largest input tokens per model call, and the number of calls."""

    async def score(state: TaskState, target: Target) -> Score:
        lengths = prompt_lengths(list(transcript().events))
        values = prompt_cost_values(lengths)
        return Score(value=values,
                     explanation=f"{len(lengths)} model calls, mean "
                                 f"{values['prompt_tokens']:.0f} input tokens, largest "
                                 f"{values['prompt_tokens_max']:.0f}",
                     metadata={"prompt_tokens_per_call": lengths})

    return score
