"""The textualiser: a scout's trajectory as a multi-turn tool-calling dialogue for SFT.

SCOUT turns its scouts' expert trajectories into the dialogue an LLM agent would have had
with the environment: the rules as the system turn, the first board as the user turn, then
per step one assistant turn calling the ``move`` tool and one tool turn with the outcome
and the next board. The messages are OpenAI-style dicts (``role``, ``content``,
``tool_calls`` with ``function.arguments`` as a dict), the shape the suite's chat
rendering takes (:mod:`harness.models.toolprompt`).

A model is trained turn by turn on *windows* of the dialogue, the context the suite's
game task shows at each turn: the system turn and the latest board as a user turn (the
games are Markov, and a tiny byte model's context is short). :func:`turns` cuts them, and
:func:`parse` reads observations and actions back, so a dialogue round-trips to the
trajectory it came from.
"""

from __future__ import annotations

from typing import Any

from methods.scout.protocol import GameLike
from methods.scout.qlearning import Trajectory

__all__ = ["DEFAULT_ARG", "DEFAULT_TOOL", "START", "dialogue", "parse", "turns"]

DEFAULT_TOOL = "move"
DEFAULT_ARG = "direction"
START = "new game"
"""The outcome line of the first board (what the game task shows before the first move)."""

Message = dict[str, Any]


def dialogue(system: str, game: GameLike, trajectory: Trajectory, *, first: str | None = None,
             tool: str = DEFAULT_TOOL, arg: str = DEFAULT_ARG) -> list[Message]:
    """The trajectory as messages: system, first board, then (call, result) per move.

    ``first`` overrides the first user turn (a task's own first message), which must then
    describe the trajectory's start state.
    """
    if len(trajectory.states) != len(trajectory.actions) + 1:
        raise ValueError("a trajectory has one more state than actions")
    messages: list[Message] = [
        {"role": "system", "content": system},
        {"role": "user", "content": first if first is not None
         else game.observe(trajectory.states[0], START)},
    ]
    for t, (action, outcome) in enumerate(zip(trajectory.actions, trajectory.outcomes,
                                              strict=True)):
        call_id = f"call_{t}"
        messages.append({"role": "assistant", "content": "", "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": tool, "arguments": {arg: action}}}]})
        messages.append({"role": "tool", "tool_call_id": call_id, "name": tool,
                         "content": game.observe(trajectory.states[t + 1], outcome)})
    return messages


def parse(messages: list[Message], *, tool: str = DEFAULT_TOOL,
          arg: str = DEFAULT_ARG) -> tuple[str, list[str], list[str]]:
    """``(system, observations, actions)`` of a dialogue: ``observations[t]`` is the board
    text the model saw before ``actions[t]`` (one more observation than actions)."""
    if len(messages) < 2 or messages[0]["role"] != "system" or messages[1]["role"] != "user":
        raise ValueError("a game dialogue starts with a system and a user turn")
    system = str(messages[0]["content"])
    observations, actions = [str(messages[1]["content"])], []
    rest = messages[2:]
    if len(rest) % 2:
        raise ValueError("after the first board, turns come in (assistant, tool) pairs")
    for call_turn, result_turn in zip(rest[::2], rest[1::2], strict=True):
        calls = call_turn.get("tool_calls") or []
        if call_turn["role"] != "assistant" or len(calls) != 1:
            raise ValueError(f"expected one {tool} call in an assistant turn, got {call_turn}")
        function = calls[0]["function"]
        if function["name"] != tool or arg not in function["arguments"]:
            raise ValueError(f"expected a {tool}({arg}=...) call, got {function}")
        if result_turn["role"] != "tool" or result_turn.get("tool_call_id") != calls[0]["id"]:
            raise ValueError("each call is followed by its tool result")
        actions.append(str(function["arguments"][arg]))
        observations.append(str(result_turn["content"]))
    return system, observations, actions


def turns(messages: list[Message], *, tool: str = DEFAULT_TOOL,
          arg: str = DEFAULT_ARG) -> list[tuple[list[Message], str]]:
    """One ``(window, action)`` per move: the window is the system turn and the board the
    move was made on, as a user turn (what the game task sends the model)."""
    system, observations, actions = parse(messages, tool=tool, arg=arg)
    return [([{"role": "system", "content": system}, {"role": "user", "content": obs}], act)
            for obs, act in zip(observations, actions, strict=False)]
