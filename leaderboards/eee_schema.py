"""The rules of Every Eval Ever's instance-level record, checked without its schema file.

Why: ``instance_level_eval.schema.json`` ships in the ``every-eval-ever`` package, which
needs Python >= 3.12, and is not in the suite's reference data, so a test that validates
against that file skips on every machine that lacks it (CI's clean clone among them) and
checks nothing there. :func:`instance_problems` states the schema's rules for the fields
(version 0.3.0 of the schema, read from the project's repository, 2026-08) as code of our
own, so the export is checked everywhere; where the real file is present, the tests run
both and require them to agree, record by record, on our exports and on broken copies of
them, so this copy of the rules cannot drift from the schema unnoticed.

The rules: the required keys and no others at the top level; the interaction type's
enum; ``input.raw`` a string and ``input.reference`` a list of strings; a single-turn
record has an ``output`` object (``raw``: a list of strings) and null ``messages``, a
multi-turn or agentic one a ``messages`` list and null ``output``; each message has a
``turn_idx`` >= 0 and a ``role``, string-or-null ``content``, tool calls with string ``id``
and ``name`` and string-valued ``arguments``, and ``tool_call_id`` a list of strings;
``answer_attribution`` items have their five fields; ``evaluation`` has a numeric
``score`` and a boolean ``is_correct`` (``num_turns`` >= 1 and ``tool_calls_count`` >= 0
where given); token counts are integers >= 0; latencies numbers >= 0; ``metadata`` and
``performance.additional_details`` map to strings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["INSTANCE_SCHEMA_VERSION", "instance_problems"]

INSTANCE_SCHEMA_VERSION = "0.3.0"
"""The version of ``instance_level_eval.schema.json`` whose rules are written here."""

REQUIRED = ("schema_version", "evaluation_id", "model_id", "evaluation_name", "sample_id",
            "interaction_type", "input", "answer_attribution", "evaluation")
OPTIONAL = ("evaluation_result_id", "sample_hash", "output", "messages", "token_usage",
            "performance", "error", "metadata")
INTERACTIONS = ("single_turn", "multi_turn", "agentic")


def _is_int(value: Any, minimum: int | None = None) -> bool:
    ok = isinstance(value, int) and not isinstance(value, bool)
    return ok and (minimum is None or value >= minimum)


def _is_number(value: Any, minimum: float | None = None) -> bool:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return ok and (minimum is None or value >= minimum)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _string_map(value: Any) -> bool:
    return isinstance(value, Mapping) and all(isinstance(v, str) for v in value.values())


def _optional(value: Any, check: Any) -> bool:
    return value is None or bool(check(value))


def _message_problems(i: int, message: Any) -> list[str]:
    where = f"messages[{i}]"
    if not isinstance(message, Mapping):
        return [f"{where}: not an object"]
    out = []
    if not _is_int(message.get("turn_idx"), 0):
        out.append(f"{where}.turn_idx: an integer >= 0 is required")
    if not isinstance(message.get("role"), str):
        out.append(f"{where}.role: a string is required")
    for key in ("content", "reasoning_trace"):
        if not _optional(message.get(key), lambda v: isinstance(v, str)):
            out.append(f"{where}.{key}: a string or null")
    if not _optional(message.get("tool_call_id"), _strings):
        out.append(f"{where}.tool_call_id: a list of strings or null")
    calls = message.get("tool_calls")
    if calls is not None and not isinstance(calls, list):
        out.append(f"{where}.tool_calls: a list or null")
    for j, call in enumerate(calls if isinstance(calls, list) else []):
        here = f"{where}.tool_calls[{j}]"
        if not isinstance(call, Mapping):
            out.append(f"{here}: not an object")
            continue
        for key in ("id", "name"):
            if not isinstance(call.get(key), str):
                out.append(f"{here}.{key}: a string is required")
        if not _optional(call.get("arguments"), _string_map):
            out.append(f"{here}.arguments: an object of strings or null")
    return out


def _evaluation_problems(evaluation: Any) -> list[str]:
    if not isinstance(evaluation, Mapping):
        return ["evaluation: an object is required"]
    out = []
    if not _is_number(evaluation.get("score")):
        out.append("evaluation.score: a number is required")
    if not isinstance(evaluation.get("is_correct"), bool):
        out.append("evaluation.is_correct: a boolean is required")
    if not _optional(evaluation.get("num_turns"), lambda v: _is_int(v, 1)):
        out.append("evaluation.num_turns: an integer >= 1 or null")
    if not _optional(evaluation.get("tool_calls_count"), lambda v: _is_int(v, 0)):
        out.append("evaluation.tool_calls_count: an integer >= 0 or null")
    return out


def _usage_problems(usage: Any, performance: Any) -> list[str]:
    out = []
    if usage is not None:
        if not isinstance(usage, Mapping):
            out.append("token_usage: an object or null")
        else:
            for key in ("input_tokens", "output_tokens", "total_tokens"):
                if not _is_int(usage.get(key), 0):
                    out.append(f"token_usage.{key}: an integer >= 0 is required")
            for key in ("input_tokens_cache_write", "input_tokens_cache_read",
                        "reasoning_tokens"):
                if not _optional(usage.get(key), lambda v: _is_int(v, 0)):
                    out.append(f"token_usage.{key}: an integer >= 0 or null")
    if performance is not None:
        if not isinstance(performance, Mapping):
            out.append("performance: an object or null")
        else:
            for key in ("latency_ms", "time_to_first_token_ms", "generation_time_ms"):
                if not _optional(performance.get(key), lambda v: _is_number(v, 0)):
                    out.append(f"performance.{key}: a number >= 0 or null")
            if not _optional(performance.get("additional_details"), _string_map):
                out.append("performance.additional_details: an object of strings or null")
    return out


def _shape_problems(record: Mapping[str, Any]) -> list[str]:
    """The interaction type decides which of ``output`` and ``messages`` is set."""
    kind, output, messages = (record.get("interaction_type"), record.get("output"),
                              record.get("messages"))
    out = []
    if output is not None:
        if not isinstance(output, Mapping) or not _strings(output.get("raw")):
            out.append("output.raw: a list of strings is required")
        elif not _optional(output.get("reasoning_trace"), _strings):
            out.append("output.reasoning_trace: a list of strings or null")
    if messages is not None and not isinstance(messages, list):
        out.append("messages: a list or null")
    if kind == "single_turn":
        if "output" not in record or output is None:
            out.append("single_turn: output must be an object")
        if messages is not None:
            out.append("single_turn: messages must be null")
    elif kind in ("multi_turn", "agentic"):
        if not isinstance(messages, list):
            out.append(f"{kind}: messages must be a list")
        if output is not None:
            out.append(f"{kind}: output must be null")
    for i, message in enumerate(messages if isinstance(messages, list) else []):
        out.extend(_message_problems(i, message))
    return out


def instance_problems(record: Any) -> list[str]:
    """What breaks the instance-level schema's rules in ``record`` (empty: none)."""
    if not isinstance(record, Mapping):
        return ["record: not an object"]
    out = [f"{key}: required" for key in REQUIRED if key not in record]
    out += [f"{key}: not a field of the schema" for key in record
            if key not in REQUIRED and key not in OPTIONAL]
    for key in ("schema_version", "evaluation_id", "model_id", "evaluation_name", "sample_id",
                "evaluation_result_id"):
        if key in record and not isinstance(record[key], str):
            out.append(f"{key}: a string is required")
    for key in ("sample_hash", "error"):
        if not _optional(record.get(key), lambda v: isinstance(v, str)):
            out.append(f"{key}: a string or null")
    if "interaction_type" in record and record["interaction_type"] not in INTERACTIONS:
        out.append(f"interaction_type: one of {', '.join(INTERACTIONS)}")
    given = record.get("input")
    if "input" in record:
        if not isinstance(given, Mapping):
            out.append("input: an object is required")
        else:
            if not isinstance(given.get("raw"), str):
                out.append("input.raw: a string is required")
            if not _strings(given.get("reference")):
                out.append("input.reference: a list of strings is required")
            if not _optional(given.get("formatted"), lambda v: isinstance(v, str)):
                out.append("input.formatted: a string or null")
            if not _optional(given.get("choices"), _strings):
                out.append("input.choices: a list of strings or null")
    attribution = record.get("answer_attribution")
    if "answer_attribution" in record and not isinstance(attribution, list):
        out.append("answer_attribution: a list is required")
    for i, item in enumerate(attribution if isinstance(attribution, list) else []):
        where = f"answer_attribution[{i}]"
        if not isinstance(item, Mapping):
            out.append(f"{where}: not an object")
            continue
        if not _is_int(item.get("turn_idx"), 0):
            out.append(f"{where}.turn_idx: an integer >= 0 is required")
        for key in ("source", "extracted_value", "extraction_method"):
            if not isinstance(item.get(key), str):
                out.append(f"{where}.{key}: a string is required")
        if not isinstance(item.get("is_terminal"), bool):
            out.append(f"{where}.is_terminal: a boolean is required")
    if "evaluation" in record:
        out += _evaluation_problems(record["evaluation"])
    out += _usage_problems(record.get("token_usage"), record.get("performance"))
    if not _optional(record.get("metadata"), _string_map):
        out.append("metadata: an object of strings or null")
    return out + _shape_problems(record)
