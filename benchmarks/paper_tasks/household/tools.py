"""The household action tools: one Inspect tool per verb, the episode kept in the store.

The tools hold no state: each call rebuilds the instance from its record, replays the
actions taken so far and applies one more, so the store's action list is the whole truth
the scorer verifies. An invalid action (or one past the step limit) raises
:class:`~inspect_ai.tool.ToolError`, which Inspect hands back to the model as the tool's
error with the simulator's reason; it still counts as a step.
"""

from __future__ import annotations

from inspect_ai.tool import Tool, ToolError, tool
from inspect_ai.util import store

from environments.household import Instance, goal_reached, replay, step

__all__ = ["ACTIONS_KEY", "LIMIT_KEY", "SPEC_KEY", "TOOL_NAMES", "act", "household_tools"]

SPEC_KEY = "household_spec"
ACTIONS_KEY = "household_actions"
LIMIT_KEY = "household_step_limit"
COMPLETE = "The task is complete: call submit."


def act(action: str) -> str:
    """Take ``action`` in the sample's episode; the observation, or ToolError on failure."""
    record = store().get(SPEC_KEY)
    if record is None:
        raise RuntimeError("the household tools run only inside a household sample")
    inst = Instance.from_dict(record)
    taken: list[list[object]] = list(store().get(ACTIONS_KEY, []))
    limit = int(store().get(LIMIT_KEY, 10**9))
    if len(taken) >= limit:
        raise ToolError(f"the step limit ({limit}) is reached; the episode is over: call submit.")
    state = replay(inst, [str(a) for a, ok in taken if ok])
    result = step(inst, state, action)
    taken.append([action, result.valid])
    store().set(ACTIONS_KEY, taken)
    counter = f" [step {len(taken)}/{limit}]"
    if not result.valid:
        raise ToolError(result.observation + counter)
    done = f" {COMPLETE}" if goal_reached(inst, result.state) else ""
    return result.observation + done + counter


@tool(name="go")
def go_to() -> Tool:
    async def execute(target: str) -> str:
        """Go to a room, or to a place (receptacle) in the room you are in.

        Args:
            target: A room (kitchen) or a place such as cabinet 1.

        Returns:
            What you see there.
        """
        return act(f"go {target}")

    return execute


@tool(name="open")
def open_place() -> Tool:
    async def execute(target: str) -> str:
        """Open the place you stand at (cabinet, drawer, fridge, microwave).

        Args:
            target: The place, such as fridge 1.

        Returns:
            What is inside.
        """
        return act(f"open {target}")

    return execute


@tool(name="close")
def close_place() -> Tool:
    async def execute(target: str) -> str:
        """Close the place you stand at.

        Args:
            target: The place, such as drawer 2.

        Returns:
            Confirmation.
        """
        return act(f"close {target}")

    return execute


def _item_tool(verb: str, summary: str) -> Tool:
    async def execute(item: str) -> str:
        return act(f"{verb} {item}")

    execute.__doc__ = f"""{summary}

        Args:
            item: The object, such as mug 1.

        Returns:
            What happened.
        """
    return execute


@tool(name="take")
def take() -> Tool:
    """Pick up an object where you stand."""
    return _item_tool("take", "Pick up an object at the place you stand (hands must be empty).")


@tool(name="put")
def put() -> Tool:
    """Put the held object at the place you stand."""
    return _item_tool("put", "Put the object you hold in or on the place you stand at.")


@tool(name="clean")
def clean() -> Tool:
    """Clean the held object at a sinkbasin."""
    return _item_tool("clean", "Clean the object you hold (stand at a sinkbasin).")


@tool(name="heat")
def heat() -> Tool:
    """Heat the held object at a microwave."""
    return _item_tool("heat", "Heat the object you hold (stand at a microwave).")


@tool(name="cool")
def cool() -> Tool:
    """Cool the held object at a fridge."""
    return _item_tool("cool", "Cool the object you hold (stand at a fridge).")


@tool(name="look")
def look_around() -> Tool:
    async def execute() -> str:
        """Look around: where you are, what you see, what you hold.

        Returns:
            The description.
        """
        return act("look")

    return execute


def household_tools() -> list[Tool]:
    """Every action tool, in the order the model sees them."""
    return [go_to(), open_place(), close_place(), take(), put(), clean(), heat(), cool(),
            look_around()]


TOOL_NAMES = ("go", "open", "close", "take", "put", "clean", "heat", "cool", "look")
