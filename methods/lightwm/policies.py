"""Scripted models for the agent studies: one policy that plays under every agent protocol.

``scripted/lightwm-experimenter`` runs a one-factor experiment on a design space it learns
from the tools (``get_action_space``; CausalGame's interface): deploy the default design,
then the default with each key at its minimum, then submit the design that survived best.
It never looks at the environment directly: everything it knows must reach it through the
agent's context, so it measures whether an agent's memory carries the facts:

* plain ReAct: it reads its own tool calls and results from the conversation;
* ReAct + running summary: it reads ``ACTION_SPACE``/``EXPERIMENT`` lines from the summary
  (as the summariser, it writes those lines: ``[memory:summarise]`` calls);
* LightWM: it reads the ``LOCAL STATE`` lines (``name = json``) of the action prompt, so
  the action space and the experiments must have been patched in and handed over; it
  answers ``[lightwm:fill]`` with ``{}`` and ``[lightwm:update]`` with ``[]`` (the schema's
  deterministic patches do the recording).

``-M variants=N`` limits the one-factor variants (default: every key); ``-M count=N`` sets
the drones per deploy (default 10). ``scripted/lightwm-quick-experimenter`` is the same with
``variants=3`` (an episode fits in 9 turns). ``scripted/lightwm-idle`` only ever answers in
text (a floor: no tool is called, nothing is submitted).
"""

from __future__ import annotations

import json
import re
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    GenerateConfig,
)
from inspect_ai.tool import ToolInfo

from harness.models.scripted import PolicyResult, scripted_policy, tool_call

Design = dict[str, float]
_LINE = re.compile(r"^(ACTION_SPACE|EXPERIMENT) (\{.*\})\s*$", re.MULTILINE)
_COUNT = re.compile(r'"(survived|deployed)": ?(\d+)')
_STATE = re.compile(r"^([A-Za-z_][\w]*) = (.*)$", re.MULTILINE)


def _json_prefix(text: str) -> Any:
    try:
        return json.JSONDecoder().raw_decode(text.strip())[0]
    except (json.JSONDecodeError, ValueError):
        return None


def _experiment(arguments: dict[str, Any], observation: Any) -> dict[str, Any] | None:
    design = arguments.get("design")
    if isinstance(design, str):
        design = _json_prefix(design)
    if not isinstance(design, dict) or not isinstance(observation, dict):
        return None
    if "survived" not in observation or "deployed" not in observation:
        return None
    return {"design": design, "survived": observation["survived"],
            "deployed": observation["deployed"]}


class Knowledge:
    """What the policy can recover from its context: action space, experiments, submission."""

    def __init__(self) -> None:
        self.action_space: dict[str, Any] | None = None
        self.experiments: list[dict[str, Any]] = []
        self.submitted = False

    def add(self, exp: dict[str, Any] | None) -> None:
        if exp is not None and exp not in self.experiments:
            self.experiments.append(exp)

    def read_lines(self, text: str) -> None:
        """``ACTION_SPACE {..}`` / ``EXPERIMENT {..}`` lines (a running summary)."""
        for kind, raw in _LINE.findall(text):
            value = _json_prefix(raw)
            if kind == "ACTION_SPACE" and isinstance(value, dict):
                self.action_space = value
            elif kind == "EXPERIMENT" and isinstance(value, dict):
                self.add(value)

    def read_state(self, text: str) -> None:
        """LightWM ``name = json`` lines: ``*action_space*``, ``*deploy*``, ``*submit*``."""
        if "LOCAL STATE:" not in text:
            return
        for name, raw in _STATE.findall(text.split("LOCAL STATE:", 1)[1]):
            value = _json_prefix(raw)
            if "action_space" in name and isinstance(value, dict):
                self.action_space = value
            elif "deploy" in name and isinstance(value, list):
                for rec in value:
                    if isinstance(rec, dict):
                        observed = rec.get("observation", rec)  # whole or scalar record
                        self.add(_experiment(rec.get("arguments") or {}, observed))
            elif "submit" in name and value is not None:
                self.submitted = True

    def read_messages(self, messages: list[ChatMessage]) -> None:
        """Tool calls and their results in the conversation itself."""
        calls: dict[str, dict[str, Any]] = {}
        for m in messages:
            if isinstance(m, ChatMessageAssistant):
                calls.update({c.id: dict(c.arguments) for c in m.tool_calls or []})
            elif isinstance(m, ChatMessageTool) and m.error is None:
                value = _json_prefix(m.text)
                if m.function == "get_action_space" and isinstance(value, dict):
                    self.action_space = value
                elif m.function == "deploy_drone":
                    self.add(_experiment(calls.get(m.tool_call_id or "", {}), value))
                elif m.function == "submit_final_design":
                    self.submitted = True
            else:
                self.read_lines(m.text)
                self.read_state(m.text)


def candidates(action_space: dict[str, Any], variants: int | None) -> list[Design]:
    """The default design, then the default with one key at its minimum, key by key."""
    space = action_space.get("design") or {}
    default = {k: float(v.get("default", v.get("min", 0))) for k, v in space.items()}
    out = [default]
    for key in list(space)[:variants]:
        lowered = {**default, key: float(space[key].get("min", 0))}
        if lowered != default:
            out.append(lowered)
    return out


def combined(experiments: list[dict[str, Any]]) -> Design:
    """The default with every one-factor change that beat the default (greedy combination)."""
    base = experiments[0]
    rate = base["survived"] / max(1, base["deployed"])
    design = dict(base["design"])
    for e in experiments[1:]:
        if e["survived"] / max(1, e["deployed"]) > rate:
            design.update({k: v for k, v in e["design"].items() if base["design"].get(k) != v})
    return design


def best(experiments: list[dict[str, Any]]) -> Design:
    """The design with the highest observed survival rate (first on ties)."""
    rate = [e["survived"] / max(1, e["deployed"]) for e in experiments]
    return dict(experiments[rate.index(max(rate))]["design"])


def summarise(input: list[ChatMessage]) -> str:
    """The scripted summariser: old summary lines plus one line per recoverable fact."""
    text = input[-1].text
    know = Knowledge()
    know.read_lines(text)
    calls: list[dict[str, Any]] = []
    for line in text.splitlines():
        if line.startswith("CALL deploy_drone "):
            calls.append(_json_prefix(line[len("CALL deploy_drone "):]) or {})
        elif line.startswith("RESULT get_action_space: "):
            value = _json_prefix(line[len("RESULT get_action_space: "):])
            know.action_space = value if isinstance(value, dict) else know.action_space
        elif line.startswith("RESULT deploy_drone: ") and calls:
            # the line may be cut mid-JSON: read the two counts, not the whole object
            counts = {k: int(v) for k, v in _COUNT.findall(line)}
            know.add(_experiment(calls.pop(0), counts))
    compact = {"design": (know.action_space or {}).get("design", {})}
    lines = [f"ACTION_SPACE {json.dumps(compact, separators=(',', ':'))}"]
    if not know.action_space:
        lines = []
    lines += [f"EXPERIMENT {json.dumps(e, separators=(',', ':'))}" for e in know.experiments]
    return "\n".join(lines) or "Nothing learned yet."


def _offered(tools: list[ToolInfo], name: str) -> bool:
    return any(t.name == name for t in tools)


def _system(input: list[ChatMessage]) -> str:
    return "\n".join(m.text for m in input if isinstance(m, ChatMessageSystem))


REPORT = ("Report: one-factor experiments from the default design; I submitted the design that "
          "survived best in Stage 1. Drones failed where a component was over- or under-built.")


@scripted_policy("lightwm-experimenter")
def lightwm_experimenter(
    input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig, args: dict[str, Any]
) -> PolicyResult:
    """One-factor experimenter that knows only what its context tells it (module docstring)."""
    return experimenter_step(input, tools, args)


def experimenter_step(
    input: list[ChatMessage], tools: list[ToolInfo], args: dict[str, Any]
) -> PolicyResult:
    """The experimenter's decision for one call (a plain function, for other policies)."""
    system = _system(input)
    if "[lightwm:fill]" in system:
        return "{}"
    if "[lightwm:update]" in system:
        return "[]"
    if "[memory:summarise]" in system:
        return summarise(input)
    know = Knowledge()
    know.read_messages(input)
    finish = _offered(tools, "finish_subtask")
    if know.submitted or not tools:
        if _offered(tools, "submit"):
            return tool_call("submit", {"answer": REPORT}, input)
        return tool_call("finish_subtask", {}, input) if finish else REPORT
    if know.action_space is None:
        if _offered(tools, "get_action_space"):
            return tool_call("get_action_space", {}, input)
        return tool_call("finish_subtask", {}, input) if finish else "I need the action space."
    variants = args.get("variants")
    tried = [e["design"] for e in know.experiments]
    todo = [d for d in candidates(know.action_space, None if variants is None else int(variants))
            if d not in tried]
    if not todo and len(tried) == len(candidates(know.action_space, None if variants is None
                                                 else int(variants))):
        todo = [d for d in [combined(know.experiments)] if d not in tried]
    if todo and _offered(tools, "deploy_drone"):
        count = int(args.get("count", 10))
        return tool_call("deploy_drone", {"design": todo[0], "count": count}, input)
    if know.experiments and _offered(tools, "submit_final_design"):
        return tool_call("submit_final_design", {"design": best(know.experiments)}, input)
    if finish:
        return tool_call("finish_subtask", {}, input)
    return "Waiting for the right tool."


@scripted_policy("lightwm-idle")
def lightwm_idle(
    input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig, args: dict[str, Any]
) -> PolicyResult:
    """Answer in text only, whatever is asked (an agent's floor)."""
    return "I am thinking about it."


@scripted_policy("lightwm-quick-experimenter")
def lightwm_quick_experimenter(
    input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig, args: dict[str, Any]
) -> PolicyResult:
    """The experimenter with three one-factor variants (an episode fits in 9 turns)."""
    return experimenter_step(input, tools, {"variants": 3, **args})
