"""LLM-based schema induction (the paper's): a model reads successful traces, writes the schema.

    python -m methods.lightwm induce-llm --traces LOGDIR --out SCHEMA.json \\
        --model embedded/qwen2.5-coder-0.5b [--family NAME] [--traces-shown 4]

LightWM induces its schema offline, once per task family, by prompting an LLM with a few
successful traces. Here the prompt shows ``traces_shown`` traces (goal, then one
``tool(args) -> observation`` line per step) and the tools, and asks for one JSON object::

    {"fields": {"name": "what it holds", ...},
     "subtasks": [{"name": "...", "description": "...", "actions": ["tool", ...],
                   "expects": ["field", ...], "produces": ["field", ...]}, ...]}

The reply is parsed robustly (:func:`parse_schema_reply`): the first JSON value in it, a
bare list of subtasks accepted, tool names read from forms like ``go(target)``, unknown
tools dropped, undeclared fields declared, names snake-cased; every repair is recorded.
Deterministic patches are added so the schema runs like an induced one: each subtask's
first produced field receives its actions' latest observation. When the reply holds no
usable subtask the rule-based schema (:func:`~.induce.induce_schema`) of the same traces
is used and the reason is kept as ``induction.fallback``: a schema file always says how it
was made.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig, Model, get_model

from methods.lightwm.agent import extract_json
from methods.lightwm.induce import IGNORED_TOOLS, Trace, induce_schema, read_traces
from methods.lightwm.schema import FieldSpec, Schema, Subtask, UpdateRule

DEFAULT_TRACES_SHOWN = 4
DEFAULT_MAX_TOKENS = 700
DEFAULT_OBSERVATION_CHARS = 110
DEFAULT_SUBTASK_STEPS = 4
INDUCE_SYSTEM = (
    "[lightwm:induce] You design the working memory of a small agent for one task family. "
    "Read the successful traces and reply with ONE JSON object: "
    '{"fields": {"field_name": "what it holds"}, "subtasks": [{"name": "...", '
    '"description": "...", "actions": ["tool"], "expects": ["field_name"], '
    '"produces": ["field_name"]}]}. Subtasks are the stages every episode goes through, '
    "in order; actions are tool names; expects are the fields a stage needs, produces the "
    "fields it fills. JSON only."
)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def goal_line(goal: str) -> str:
    """The line of a task's opening that states the task (``Your task is to: ...``, any
    line naming the task or goal), else its last line: a small model's prompt keeps one."""
    lines = [ln.strip() for ln in goal.strip().splitlines() if ln.strip()]
    for pattern in (r"^(your )?(task|goal)( is to)?:", r"\b(task|goal)\b"):
        for ln in lines:
            if re.search(pattern, ln, flags=re.IGNORECASE) and len(ln) < 300:
                return ln
    return lines[-1] if lines else ""


def render_trace(trace: Trace, obs_chars: int = DEFAULT_OBSERVATION_CHARS) -> str:
    """A trace as the inducing model reads it: the goal line, then one line a step."""
    goal = goal_line(trace.goal)
    lines = [f"GOAL: {goal}"]
    for i, s in enumerate(trace.steps, start=1):
        if s.tool in IGNORED_TOOLS:
            continue
        args = ", ".join(f"{k}={v}" for k, v in s.arguments.items())
        obs = " ".join(s.observation.split())[:obs_chars]
        lines.append(f"{i}. {s.tool}({args}) -> {'ERROR ' if s.error else ''}{obs}")
    return "\n".join(lines)


def induction_prompt(traces: list[Trace], tools: list[str]) -> str:
    """The user turn: the tools, then each shown trace."""
    shown = "\n\n".join(f"TRACE {i + 1}\n{render_trace(t)}" for i, t in enumerate(traces))
    return f"Tools: {', '.join(tools)}\n\n{shown}\n\nWrite the schema JSON."


def _snake(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", str(text).lower()).strip("_")


def _names(value: Any) -> list[str]:
    if isinstance(value, str):
        value = re.split(r"[,;]", value)
    if not isinstance(value, list):
        return []
    return [n for n in (_snake(str(v)) for v in value if isinstance(v, str | int)) if n]


def _tool_name(value: Any, tools: list[str]) -> str | None:
    found = _NAME.search(str(value))
    if found is None:
        return None
    name = found.group(0)
    lowered = {t.lower(): t for t in tools}
    return lowered.get(name.lower())


def _fields(raw: Any, repairs: list[str]) -> dict[str, FieldSpec]:
    out: dict[str, FieldSpec] = {}
    items: list[tuple[Any, Any]]
    if isinstance(raw, dict):
        items = list(raw.items())
    elif isinstance(raw, list):
        items = [(r.get("name"), r) if isinstance(r, dict) else (r, "") for r in raw]
    else:
        if raw is not None:
            repairs.append(f"fields ignored (not an object or list: {type(raw).__name__})")
        items = []
    for name, spec in items:
        key = _snake(name) if isinstance(name, str) else ""
        if not key:
            repairs.append(f"field without a usable name dropped: {name!r}")
            continue
        desc = spec.get("description", "") if isinstance(spec, dict) else str(spec or "")
        kind = spec.get("type") if isinstance(spec, dict) else None
        valid = kind in ("any", "object", "array", "string", "number", "integer", "boolean")
        out[key] = FieldSpec(type=kind if valid else "any", description=str(desc)[:200])  # type: ignore[arg-type]
    return out


def _subtask(i: int, raw: Any, tools: list[str], fields: dict[str, FieldSpec],
             repairs: list[str]) -> Subtask | None:
    if isinstance(raw, str):
        raw = {"name": raw}
    if not isinstance(raw, dict):
        repairs.append(f"subtask {i + 1} dropped (not an object)")
        return None
    name = _snake(raw.get("name") or raw.get("subtask") or f"step_{i + 1}") or f"step_{i + 1}"
    actions: list[str] = []
    given = raw.get("actions", raw.get("tools", []))
    for a in (given if isinstance(given, list) else re.split(r"[,;]", str(given))):
        tool_name = _tool_name(a, tools)
        if tool_name is None:
            repairs.append(f"subtask {name}: unknown action {a!r} dropped")
        elif tool_name not in actions:
            actions.append(tool_name)
    if not actions:
        repairs.append(f"subtask {name}: no known action, every tool allowed")
        actions = ["*"]
    expects, produces = _names(raw.get("expects")), _names(raw.get("produces"))
    for f in [*expects, *produces]:
        if f not in fields:
            fields[f] = FieldSpec(description="declared by a subtask")
            repairs.append(f"field {f!r} used by subtask {name} was undeclared: declared")
    updates = [UpdateRule(tool=a, op="replace", path=f"/{produces[0]}", value="$observation")
               for a in actions] if produces else []
    steps = raw.get("max_steps")
    return Subtask(
        name=f"{i + 1}_{name}",
        description=str(raw.get("description") or "")[:300],
        actions=actions,
        expects=expects,
        produces=produces,
        updates=updates,
        finish="produced" if produces and len(actions) == 1 else "model",
        max_steps=steps if isinstance(steps, int) and 1 <= steps <= 30 else DEFAULT_SUBTASK_STEPS,
    )


def parse_schema_reply(text: str, tools: list[str], family: str) -> tuple[Schema, list[str]]:
    """The schema a model's reply describes, and the repairs made (ValueError: unusable)."""
    value = extract_json(text)
    if isinstance(value, list):
        value = {"subtasks": value}
    if not isinstance(value, dict):
        raise ValueError(f"the reply's JSON is a {type(value).__name__}, not an object")
    repairs: list[str] = []
    fields = _fields(value.get("fields"), repairs)
    raw_subtasks = value.get("subtasks", value.get("steps"))
    if not isinstance(raw_subtasks, list) or not raw_subtasks:
        raise ValueError("the reply has no list of subtasks")
    subtasks = [s for i, r in enumerate(raw_subtasks)
                if (s := _subtask(i, r, tools, fields, repairs)) is not None]
    if not subtasks:
        raise ValueError("no subtask of the reply is usable")
    fields.setdefault("goal", FieldSpec(type="string", description="the task as given"))
    if "goal" not in subtasks[0].expects:
        subtasks[0].expects.insert(0, "goal")
    return Schema(family=family, description=str(value.get("description") or
                                                 "Induced by a model from successful traces."),
                  fields=fields, subtasks=subtasks), repairs


def trace_tools(traces: list[Trace]) -> list[str]:
    """The tools the traces call, in first-use order (bookkeeping tools left out)."""
    seen: dict[str, None] = {}
    for t in traces:
        for s in t.steps:
            if s.tool not in IGNORED_TOOLS:
                seen.setdefault(s.tool, None)
    return list(seen)


async def induce_llm_schema(traces: list[Trace], family: str, model: Model,
                            traces_shown: int = DEFAULT_TRACES_SHOWN,
                            max_tokens: int = DEFAULT_MAX_TOKENS) -> Schema:
    """Ask ``model`` for the schema of ``traces``; fall back to the rule-based one (recorded)."""
    if not traces:
        raise ValueError("no successful traces to induce a schema from")
    shown = traces[:traces_shown]
    tools = trace_tools(traces)
    output = await model.generate(
        [ChatMessageSystem(content=INDUCE_SYSTEM),
         ChatMessageUser(content=induction_prompt(shown, tools))],
        config=GenerateConfig(max_tokens=max_tokens, temperature=0.0),
    )
    reply = output.completion
    fallback: str | None = None
    repairs: list[str] = []
    try:
        schema, repairs = parse_schema_reply(reply, tools, family)
    except ValueError as exc:
        fallback = f"{exc}; used the rule-based schema of the same traces"
        schema = induce_schema(traces, family)
    schema.traces = len(shown)
    schema.induction = {"method": "llm", "model": str(model), "traces_shown": len(shown),
                        "fallback": fallback, "repairs": repairs, "reply": reply[:4000]}
    return schema


def induce_llm(traces: Path, out: Path, model: str, family: str | None = None,
               score: str | None = None, threshold: float = 1.0,
               traces_shown: int = DEFAULT_TRACES_SHOWN,
               max_tokens: int = DEFAULT_MAX_TOKENS,
               model_args: dict[str, Any] | None = None) -> Schema:
    """Read successful traces, induce with ``model``, write the schema to ``out``.

    Args:
        traces: A log file or folder of Inspect logs.
        out: Schema JSON path (a folder gets ``<family>.json``).
        model: An Inspect model name (``embedded/qwen2.5-coder-0.5b``).
        family: Task family name (default: the first trace's task name).
        score: Score key that defines success (default: every key reaches threshold).
        threshold: Minimum score value of a successful sample.
        traces_shown: How many traces the prompt shows.
        max_tokens: Cap of the model's reply.
        model_args: Provider arguments (``{"n_threads": 1}`` for the embedded ladder).
    """
    found = read_traces(Path(traces), score, threshold)
    if not found:
        raise ValueError(f"no sample under {traces} reaches {threshold} on {score or 'all scores'}")
    name = family or found[0].task.rsplit("/", 1)[-1] or "generic"
    llm = get_model(model, **(model_args or {}))
    schema = asyncio.run(induce_llm_schema(found, name, llm, traces_shown, max_tokens))
    target = Path(out)
    if target.is_dir() or not target.suffix:
        target = target / f"{name}.json"
    schema.save(target)
    return schema


def summary(schema: Schema) -> str:
    """One line: family, how it was induced, the subtask sequence."""
    info = schema.induction or {}
    how = "fallback: " + str(info["fallback"]) if info.get("fallback") else "llm"
    steps = " -> ".join(s.name for s in schema.subtasks)
    return f"{schema.family} ({how}): {len(schema.fields)} fields, {steps}; " + \
        json.dumps(info.get("repairs", []))[:300]
