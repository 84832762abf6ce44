"""Reference agents for the SCOUT games, as scripted policies that see only the model's view.

``scripted/scout-oracle`` reads the rules and the latest board from the request, plans
with BFS and calls ``move`` with the first step: it proves every instance solvable through
the task's own text and tool (the ceiling, 1.0 solved at efficiency 1.0).

    inspect eval benchmarks/paper_tasks/scout/scout.py --model scripted/scout-oracle \\
        -M policy_module=benchmarks.paper_tasks.scout.policies
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageSystem, GenerateConfig
from inspect_ai.tool import ToolInfo

from environments.scout import shortest_path
from environments.scout.text import game_of_rules, parse_board
from harness.models.scripted import PolicyResult, last_user_text, scripted_policy, tool_call


def _family(input: list[ChatMessage]) -> str:
    rules = " ".join(m.text for m in input if isinstance(m, ChatMessageSystem))
    family = game_of_rules(rules)
    if family is None:
        raise ValueError("the scout policies play only the SCOUT game task")
    return family


@scripted_policy("scout-oracle")
def scout_oracle(input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig,
                 args: dict[str, Any]) -> PolicyResult:
    """BFS from the board in the last user turn; move by its first step."""
    game = parse_board(_family(input), last_user_text(input))
    path = shortest_path(game)
    if not path:
        raise ValueError("the board has no solution (or is already solved)")
    return tool_call("move", {"direction": path[0]}, input)

