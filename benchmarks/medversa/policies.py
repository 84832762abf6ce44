"""Scripted reference reader for the black-box path (``scripted/medversa-reader``).

It answers like a compliant but easily distracted model: a question that appears verbatim
among the "Updated facts" gets that fact's answer; any other question gets the answer of the
last fact shown (in-context facts distract it); with no facts it says "unknown", so its
pre-edit answers are stable. Unedited it scores 0 efficacy and full locality; with every
edit in context (ike, batch) locality collapses; with retrieval only a false retrieval or a
missed paraphrase costs points. Tests use it to check the black-box scoring end to end.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig
from inspect_ai.tool import ToolInfo

from harness.models.scripted import scripted_policy

UNKNOWN = "unknown"


def read_answer(text: str) -> str:
    """The reader's reply to one user message built by the MedVersa black-box solver."""
    head, _, question = text.rpartition("Question: ")
    facts = [line.strip() for line in head.splitlines()[1:] if line.strip()]
    for fact in facts:
        if fact.startswith(question.strip() + " "):
            return fact[len(question.strip()) + 1:]
    if facts:
        last = facts[-1]
        return last.split("? ", 1)[1] if "? " in last else last
    return UNKNOWN


@scripted_policy("medversa-reader")
def medversa_reader(input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig,
                    args: dict[str, Any]) -> str:
    """Answer the last user message with :func:`read_answer`."""
    return read_answer(input[-1].text)
