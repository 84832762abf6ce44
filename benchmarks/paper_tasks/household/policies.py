"""Reference agents for the household task, as scripted policies over the model's view.

``scripted/household-oracle`` reads the episode line of the system turn, rebuilds the
instance, replays the successful tool calls of the conversation so far, plans the rest by
BFS and calls the first action; once the goal holds it calls ``submit``. It proves each
instance solvable through the task's own text and tools (the ceiling: success 1.0 at
efficiency 1.0). It needs the whole conversation, so it plays under plain ReAct (the
task's own solver); its logs are the scripted-expert traces LightWM's schemas are induced
from.

``scripted/household-idle`` answers in text only (a floor: no action is taken).

    inspect eval harness/household --model scripted/household-oracle -T n=40 \\
        -M policy_module=benchmarks.paper_tasks.household.policies
"""

from __future__ import annotations

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

from environments.household import generate, goal_reached, replay, shortest_plan
from harness.models.scripted import PolicyResult, scripted_policy, tool_call

_EPISODE = re.compile(r"Episode: household seed=(\d+) steps=(\d+)-(\d+)")
ARGUMENT = {"go": "target", "open": "target", "close": "target", "take": "item",
            "put": "item", "clean": "item", "heat": "item", "cool": "item"}


def episode_of(input: list[ChatMessage]) -> tuple[int, int, int]:
    """(seed, min_steps, max_steps) from the system turn's episode line."""
    for m in input:
        if isinstance(m, ChatMessageSystem):
            found = _EPISODE.search(m.text)
            if found:
                seed, lo, hi = (int(g) for g in found.groups())
                return seed, lo, hi
    raise ValueError("the household policies play only the household task")


def actions_taken(input: list[ChatMessage]) -> list[str]:
    """The actions of the conversation's successful tool calls, in order."""
    calls: dict[str, str] = {}
    out: list[str] = []
    for m in input:
        if isinstance(m, ChatMessageAssistant):
            for c in m.tool_calls or []:
                arg = c.arguments.get(ARGUMENT.get(c.function, ""), "")
                calls[c.id] = f"{c.function} {arg}".strip()
        elif isinstance(m, ChatMessageTool) and m.error is None and m.tool_call_id in calls:
            if m.function in ARGUMENT:
                out.append(calls[m.tool_call_id])
    return out


@scripted_policy("household-oracle")
def household_oracle(input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig,
                     args: dict[str, Any]) -> PolicyResult:
    """Replan by BFS from the replayed state; act by its first step, or submit when done."""
    inst = generate(*episode_of(input))
    state = replay(inst, actions_taken(input))
    if goal_reached(inst, state):
        if any(t.name == "submit" for t in tools):
            return tool_call("submit", {"answer": "done"}, input)
        return "done"
    plan = shortest_plan(inst, state)
    if not plan:
        raise ValueError("no plan from the replayed state")
    verb, _, arg = plan[0].partition(" ")
    return tool_call(verb, {ARGUMENT[verb]: arg}, input)


@scripted_policy("household-idle")
def household_idle(input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig,
                   args: dict[str, Any]) -> PolicyResult:
    """Never act (the floor)."""
    return "I will think about it."
