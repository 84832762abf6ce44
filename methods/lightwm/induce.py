"""Offline schema induction: successful traces in Inspect logs -> a LightWM schema file.

    python -m methods.lightwm induce --traces LOGDIR --out SCHEMA.json \\
        [--family NAME] [--score victory] [--threshold 1.0]

Which samples count as successful is read through :mod:`harness.results` (the project's
one reader of logs): rows whose ``score_key`` (default: every key of the sample) reaches
``threshold``. Their conversations are then read from the same log files
(:func:`sample_messages`, built on ``harness.results``' zip member reader, since the
results frame holds scores, not messages).

The induction is deterministic (no LLM; the paper prompts an LLM, which a small CPU model
cannot do reliably — a seam for that is :func:`induce_schema`'s ``traces`` input):

* the tool sequence of each trace is compressed into runs (``get_history``,
  ``deploy_drone x3``, ``submit_final_design``); the most common run sequence becomes the
  base subtask sequence, one subtask per run (repeated runs finish when the model says so);
* each subtask produces ``<tool>_result`` (or ``<tool>_results`` for repeated runs: a list
  of records holding the call's arguments and the observation's scalar members), filled
  by a deterministic patch;
* a subtask expects an earlier subtask's field when its call arguments reuse a value that
  field holds (data flow read off the traces), plus the init-rule fields;
* ``Key: value`` lines present in every trace's goal become init-rule fields.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from harness.results import iter_results, read_sample_messages
from methods.lightwm.schema import FieldSpec, InitRule, Schema, Subtask, UpdateRule
from methods.lightwm.state import parse_observation

IGNORED_TOOLS = frozenset({"submit", "finish_subtask", "think"})


@dataclass
class Step:
    """One tool call of a trace and what came back."""

    tool: str
    arguments: dict[str, Any]
    observation: str
    error: bool = False


@dataclass
class Trace:
    """A successful episode: its goal text and its tool steps, in order."""

    goal: str
    steps: list[Step] = field(default_factory=list)
    task: str = ""


# --------------------------------------------------------------------------- reading logs


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return ""


def trace_from_messages(messages: list[dict[str, Any]], task: str = "") -> Trace:
    """A :class:`Trace` from a logged conversation (Inspect's message dicts)."""
    goal_parts: list[str] = []
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    trace = Trace(goal="", task=task)
    seen_assistant = False
    for m in messages:
        role = m.get("role")
        if role == "assistant":
            seen_assistant = True
            for c in m.get("tool_calls") or []:
                calls[str(c.get("id"))] = (str(c.get("function")), dict(c.get("arguments") or {}))
        elif role == "tool":
            name, args = calls.get(str(m.get("tool_call_id")), (str(m.get("function")), {}))
            if name in IGNORED_TOOLS:
                continue
            failed = m.get("error") is not None
            trace.steps.append(Step(name, args, _text(m.get("content")), failed))
        elif not seen_assistant and role in ("system", "user"):
            goal_parts.append(_text(m.get("content")))
    trace.goal = "\n\n".join(goal_parts)
    return trace


def successful_samples(
    traces: Path, score: str | None = None, threshold: float = 1.0
) -> pl.DataFrame:
    """(log_file, sample_id, epoch, task) of samples whose score reaches ``threshold``.

    ``score`` matches ``score_key`` exactly or its last ``/`` part (``victory`` matches
    ``causalgame_scorer/victory``); None means every score key of the sample must reach it.
    """
    frames = [f for f in iter_results(traces)]
    if not frames:
        return pl.DataFrame(schema={"log_file": pl.String, "sample_id": pl.String,
                                    "epoch": pl.Int64, "task": pl.String})
    rows = pl.concat(frames, how="diagonal_relaxed").filter(pl.col("error").is_null())
    if score is not None:
        rows = rows.filter(
            (pl.col("score_key") == score)
            | (pl.col("score_key").str.split("/").list.last() == score)
        )
    keys = ["log_file", "sample_id", "epoch", "task"]
    return (
        rows.group_by(keys)
        .agg(pl.col("score_value").min().alias("worst"))
        .filter(pl.col("worst") >= threshold)
        .select(keys)
        .sort(keys)
    )


def sample_messages(log_file: str | Path, sample_id: str, epoch: int) -> list[dict[str, Any]]:
    """One sample's logged messages (read through :mod:`harness.results`)."""
    return read_sample_messages(log_file, sample_id, epoch)


def read_traces(traces: Path, score: str | None = None, threshold: float = 1.0) -> list[Trace]:
    """Every successful trace under ``traces`` (a log file or folder)."""
    found = successful_samples(traces, score, threshold)
    return [
        trace_from_messages(sample_messages(r["log_file"], r["sample_id"], r["epoch"]), r["task"])
        for r in found.iter_rows(named=True)
    ]


# --------------------------------------------------------------------------- induction


def runs(trace: Trace) -> list[tuple[str, list[Step]]]:
    """Consecutive calls of the same tool grouped (failed calls are dropped)."""
    out: list[tuple[str, list[Step]]] = []
    for step in trace.steps:
        if step.error:
            continue
        if out and out[-1][0] == step.tool:
            out[-1][1].append(step)
        else:
            out.append((step.tool, [step]))
    return out


def _json_type(value: Any) -> str:
    for name, types in (("object", dict), ("array", list), ("boolean", bool), ("string", str)):
        if isinstance(value, types):
            return name
    return "number" if isinstance(value, int | float) else "any"


def _leaves(value: Any) -> list[str]:
    """Scalar values worth tracing through (skip short numbers and booleans)."""
    if isinstance(value, dict):
        return [x for v in value.values() for x in _leaves(v)]
    if isinstance(value, list):
        return [x for v in value for x in _leaves(v)]
    if isinstance(value, bool) or value is None:
        return []
    text = str(value)
    return [text] if len(text) >= 3 else []


def _record_template(observation: Any) -> dict[str, Any]:
    """What a repeated call keeps: its arguments and the observation's scalar members.

    Nested lists and objects (per-item details) are dropped so that a growing list of
    records stays small enough for a small model's context; a non-object observation is
    kept whole.
    """
    if not isinstance(observation, dict):
        return {"arguments": "$arguments", "observation": "$observation"}
    scalars = [k for k, v in observation.items() if not isinstance(v, dict | list)]
    return {"arguments": "$arguments", **{k: f"$observation.{k}" for k in scalars}}


def _snake(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def _init_rules(goals: list[str]) -> tuple[dict[str, FieldSpec], list[InitRule]]:
    line = re.compile(r"^([A-Z][A-Za-z0-9 ]{1,30}):[ \t]*(\S.*)$", re.MULTILINE)
    keys = [set(m.group(1) for m in line.finditer(g)) for g in goals]
    common = set.intersection(*keys) if keys else set()
    fields: dict[str, FieldSpec] = {}
    rules: list[InitRule] = []
    for key in sorted(common):
        name = _snake(key)
        if not name or name == "goal":
            continue
        fields[name] = FieldSpec(type="string", description=f"'{key}' line of the task")
        rules.append(InitRule(field=name, pattern=rf"^{re.escape(key)}:[ \t]*(\S.*)$"))
    return fields, rules


def induce_schema(traces: list[Trace], family: str) -> Schema:
    """A schema from successful traces (module docstring gives the rules)."""
    if not traces:
        raise ValueError("no successful traces to induce a schema from")
    sequences = [tuple(tool for tool, _ in runs(t)) for t in traces]
    counts = Counter(sequences)
    base = max(counts, key=lambda s: (counts[s], len(s)))
    if not base:
        raise ValueError("the successful traces contain no tool calls")
    matching = [runs(t) for t, s in zip(traces, sequences, strict=True) if s == base]
    fields, rules = _init_rules([t.goal for t in traces])
    fields["goal"] = FieldSpec(type="string", description="the task as given")
    subtasks: list[Subtask] = []
    produced_by: list[str] = []
    for i, tool in enumerate(base):
        steps = [s for r in matching for s in r[i][1]]
        repeated = max(len(r[i][1]) for r in matching) > 1
        sample = parse_observation(steps[0].observation)
        if repeated:
            name = f"{tool}_results"
            fields[name] = FieldSpec(type="array", description=f"every {tool} call and its result")
            update = UpdateRule(tool=tool, op="add", path=f"/{name}/-",
                                value=_record_template(sample))
        else:
            name = f"{tool}_result"
            fields[name] = FieldSpec(type=_json_type(sample), description=f"what {tool} returned")  # type: ignore[arg-type]
            update = UpdateRule(tool=tool, op="replace", path=f"/{name}", value="$observation")
        expects = [r.field for r in rules]
        for j, earlier in enumerate(produced_by):
            held = " ".join(
                json.dumps(s.arguments) + " " + s.observation for r in matching for s in r[j][1]
            )
            if any(v in held for s in steps for v in _leaves(s.arguments)):
                expects.append(earlier)
        longest = max(len(r[i][1]) for r in matching)
        subtasks.append(Subtask(
            name=f"{i + 1}_{tool}",
            description=f"call {tool}" + (f" (about {longest} times)" if repeated else ""),
            actions=[tool],
            expects=list(dict.fromkeys(expects)),
            produces=[name],
            updates=[update],
            finish="model" if repeated else "produced",
            max_steps=longest + 1 if repeated else 2,
        ))
        produced_by.append(name)
    return Schema(
        family=family,
        description=f"Induced from {len(traces)} successful traces "
        f"({counts[base]} follow the base sequence).",
        fields=fields,
        init_rules=rules,
        subtasks=subtasks,
        traces=len(traces),
        induction={"method": "rules", "base_sequence_share": counts[base] / len(traces)},
    )


def induce(
    traces: Path,
    out: Path,
    family: str | None = None,
    score: str | None = None,
    threshold: float = 1.0,
) -> Schema:
    """``harness method lightwm induce``: read successful traces, write the schema to ``out``.

    Args:
        traces: A log file or a folder of Inspect logs.
        out: Where to write the schema JSON (a folder gets ``<family>.json``).
        family: Task family name (default: the task name of the first successful trace).
        score: Score key that defines success (default: every key must reach threshold).
        threshold: Minimum score value of a successful sample.
    """
    found = read_traces(Path(traces), score, threshold)
    if not found:
        raise ValueError(f"no sample under {traces} reaches {threshold} on {score or 'all scores'}")
    name = family or found[0].task.rsplit("/", 1)[-1] or "generic"
    schema = induce_schema(found, name)
    target = Path(out)
    if target.is_dir() or not target.suffix:
        target = target / f"{name}.json"
    schema.save(target)
    return schema
