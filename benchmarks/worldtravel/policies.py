"""Reference agents for WorldTravel, as scripted policies.

``scripted/worldtravel-oracle`` submits the CP-SAT reference plan (feasibility must be
100%: it proves every scenario solvable and the checker and solver in agreement).
``scripted/worldtravel-greedy`` plans stop by stop with local choices only
(``environments.worldtravel.agents.greedy_plan``); ``scripted/worldtravel-random``
submits a random itinerary of the right shape. The rest of the reference-planner family
(``environments.worldtravel.planners``) is served as ``scripted/worldtravel-<member>``:
``shortcut-cost``, ``shortcut-time``, ``shortcut-slack``, ``lookahead-1``,
``lookahead-3`` and ``beam``. They look facts up in the world directly
rather than through the tools: they are yardsticks, not tool-use agents. With
``-M lookups=N`` the oracle first makes N get_details calls (exercises tool counting).
"""

from __future__ import annotations

import json
import re
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageTool, GenerateConfig
from inspect_ai.tool import ToolInfo

from environments.worldtravel.agents import greedy_plan, random_plan
from environments.worldtravel.planners import PLANNERS, Planner
from environments.worldtravel.store import scenario_index, shipped_world
from harness.models.scripted import PolicyResult, scripted_policy, tool_call

_ID = re.compile(r"Scenario ID: (\S+)")


def _scenario_id(input: list[ChatMessage]) -> str:
    for message in input:
        found = _ID.search(message.text)
        if found:
            return found.group(1)
    raise ValueError("no 'Scenario ID:' line in the conversation")


def _submit(plan: dict[str, Any], input: list[ChatMessage], tools: list[ToolInfo]) -> PolicyResult:
    text = json.dumps(plan, separators=(",", ":"))
    if any(t.name == "submit" for t in tools):
        return tool_call("submit", {"answer": text}, input)
    return text


@scripted_policy("worldtravel-oracle")
def worldtravel_oracle(
    input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig, args: dict[str, Any]
) -> PolicyResult:
    """Submit the reference plan (after ``-M lookups=N`` get_details calls)."""
    scenario = scenario_index()[_scenario_id(input)]
    assert scenario.reference_plan is not None
    done = sum(isinstance(m, ChatMessageTool) and m.function == "get_details" for m in input)
    lookups = int(args.get("lookups", 0))
    if done < lookups and any(t.name == "get_details" for t in tools):
        stops = [s for d in scenario.reference_plan["days"] for s in d["stops"]]
        return tool_call("get_details", {"id": stops[done % len(stops)]["id"]}, input)
    return _submit(scenario.reference_plan, input, tools)


@scripted_policy("worldtravel-greedy")
def worldtravel_greedy(
    input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig, args: dict[str, Any]
) -> PolicyResult:
    """Submit the greedy planner's itinerary."""
    scenario = scenario_index()[_scenario_id(input)]
    return _submit(greedy_plan(shipped_world(), scenario), input, tools)


@scripted_policy("worldtravel-random")
def worldtravel_random(
    input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig, args: dict[str, Any]
) -> PolicyResult:
    """Submit a random itinerary of the requested shape (``-M seed=N``)."""
    scenario = scenario_index()[_scenario_id(input)]
    return _submit(random_plan(shipped_world(), scenario, int(args.get("seed", 0))), input, tools)


def _member_policy(planner: Planner) -> Any:
    def policy(
        input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig,
        args: dict[str, Any],
    ) -> PolicyResult:
        scenario = scenario_index()[_scenario_id(input)]
        return _submit(planner(shipped_world(), scenario), input, tools)

    return policy


for _name, _planner in PLANNERS.items():
    if _name != "greedy":  # served above, under its historical name
        _policy = _member_policy(_planner)
        _policy.__doc__ = f"Submit the {_name} reference planner's itinerary."
        scripted_policy(f"worldtravel-{_name}")(_policy)
