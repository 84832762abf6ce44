"""Optimal plans by breadth-first search over the simulator's own states.

The search offers only actions that can matter for the goal: going to rooms and to the
places that hold goal objects, the target and the needed appliance; opening those; taking
goal objects; putting the held object on the target; the goal's treatment. Every other
action (closing, taking or placing anything else, visiting other places) can only lengthen
a plan (one hand, deterministic rules), so the pruned search still returns a shortest plan
of the full simulator; ``tests/environments/household`` checks that against a search over
:func:`~environments.household.sim.valid_actions` on small instances.
"""

from __future__ import annotations

from collections import deque

from environments.household.sim import (
    State,
    goal_reached,
    initial_state,
    step,
    valid_actions,
)
from environments.household.world import TREATMENT_APPLIANCE, Instance

MAX_STATES = 200_000


def relevant_places(inst: Instance) -> set[str]:
    """Places a shortest plan can visit: goal objects' start places, target, appliance."""
    g = inst.goal
    places = {place for _, kind, place in inst.objects if kind == g.obj}
    places.add(g.target)
    if g.treatment is not None:
        places |= {r.name for r in inst.receptacles
                   if r.kind == TREATMENT_APPLIANCE[g.treatment]}
    return places


def useful_actions(inst: Instance, state: State, places: set[str]) -> list[str]:
    """The valid actions of ``state`` that can appear in a shortest plan (module doc)."""
    g = inst.goal
    out: list[str] = []
    for action in valid_actions(inst, state):
        verb, _, arg = action.partition(" ")
        if verb == "go" and (arg in inst.rooms or arg in places):
            out.append(action)
        elif verb == "open" and arg in places:
            out.append(action)
        elif verb == "take" and inst.object_kind(arg) == g.obj:
            out.append(action)
        elif verb == "put" and state.loc == g.target:
            out.append(action)
        elif verb == g.treatment:
            out.append(action)
    return out


def shortest_plan(inst: Instance, start: State | None = None, pruned: bool = True,
                  max_states: int = MAX_STATES) -> list[str] | None:
    """A shortest action list reaching the goal from ``start`` (None: unreachable).

    ``pruned=False`` searches every valid action (slow; for checking the pruning).
    """
    root = start if start is not None else initial_state(inst)
    if goal_reached(inst, root):
        return []
    places = relevant_places(inst)
    parent: dict[State, tuple[State, str] | None] = {root: None}
    queue = deque([root])
    while queue:
        state = queue.popleft()
        actions = useful_actions(inst, state, places) if pruned else valid_actions(inst, state)
        for action in actions:
            nxt = step(inst, state, action).state
            if nxt in parent:
                continue
            parent[nxt] = (state, action)
            if goal_reached(inst, nxt):
                return _path(parent, nxt)
            if len(parent) > max_states:
                raise RuntimeError(f"plan search exceeded {max_states} states")
            queue.append(nxt)
    return None


def _path(parent: dict[State, tuple[State, str] | None], end: State) -> list[str]:
    out: list[str] = []
    link = parent[end]
    while link is not None:
        prev, action = link
        out.append(action)
        link = parent[prev]
    return out[::-1]
