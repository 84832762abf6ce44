"""The household simulator: immutable states, one step per action, exact verification.

Actions are strings (``go cabinet 2``, ``open fridge 1``, ``take mug 1``, ``put mug 1``,
``clean mug 1``, ``heat apple 1``, ``cool apple 1``, ``close drawer 1``, ``look``). The
rules, ALFWorld-like:

* ``go X``: X is a room (always reachable) or a receptacle of the room the agent is in;
* ``open``/``close X``: the agent stands at X and X opens; contents show once it is open;
* ``take O``: at O's receptacle, it is open (or does not open), hands empty (one object);
* ``put O``: holding O, at an open (or non-opening) receptacle;
* ``clean``/``heat``/``cool O``: holding O, at a sinkbasin / microwave / fridge.

An invalid action leaves the state unchanged and says why ("Nothing happens: ..."), so a
tool can hand the reason back to the model. States are frozen and hashable so the planner
(:mod:`.plan`) can search them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from environments.household.world import PROPERTY, TREATMENT_APPLIANCE, Instance

VERBS = ("go", "open", "close", "take", "put", "clean", "heat", "cool", "look")
HAND = "@hand"
"""The place of the object the agent holds."""


@dataclass(frozen=True)
class ObjState:
    """Where one object is and which properties it has."""

    name: str
    place: str
    clean: bool = False
    hot: bool = False
    cold: bool = False


@dataclass(frozen=True)
class State:
    """The agent's location (a room or a receptacle), what is open, and every object."""

    loc: str
    room: str
    opened: frozenset[str]
    objects: tuple[ObjState, ...]

    @property
    def holding(self) -> str | None:
        """The object in the agent's hand, or None."""
        for o in self.objects:
            if o.place == HAND:
                return o.name
        return None

    def obj(self, name: str) -> ObjState | None:
        """The state of object ``name``, or None."""
        for o in self.objects:
            if o.name == name:
                return o
        return None

    def at(self, place: str) -> list[str]:
        """Names of the objects in or on ``place``."""
        return [o.name for o in self.objects if o.place == place]


@dataclass(frozen=True)
class StepResult:
    """What an action did: the next state, the text, and whether it was valid."""

    state: State
    observation: str
    valid: bool


def initial_state(inst: Instance) -> State:
    """Every object at its start place, everything closed, the agent mid-room."""
    return State(
        loc=inst.start_room,
        room=inst.start_room,
        opened=frozenset(),
        objects=tuple(ObjState(name, place) for name, _, place in inst.objects),
    )


def _list(names: list[str]) -> str:
    if not names:
        return "nothing"
    items = [f"{'an' if n[0] in 'aeiou' else 'a'} {n}" for n in names]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f", and {items[-1]}"


def describe_place(inst: Instance, state: State, place: str) -> str:
    """What the agent sees at a receptacle (contents only if open or not openable)."""
    r = inst.receptacle(place)
    if r is None:
        return ""
    if r.openable and place not in state.opened:
        return f"The {place} is closed."
    prep = "In" if inst.preposition(place) == "in" else "On"
    return f"{prep} the {place}, you see {_list(state.at(place))}."


def describe_room(inst: Instance, room: str) -> str:
    """The receptacles of a room, in the order the generator listed them."""
    return f"the {room} has " + _list([r.name for r in inst.in_room(room)]) + "."


def intro(inst: Instance) -> str:
    """The opening observation: the goal first (agents that keep only a prompt's head keep
    it), then where the agent is and the house."""
    rooms = " ".join(describe_room(inst, room).capitalize() for room in inst.rooms)
    others = [r for r in inst.rooms if r != inst.start_room]
    hint = f" (go to the {others[0]} first to reach its places)" if others else ""
    return (
        f"Your task is to: {inst.goal_text}.\n"
        f"You are in the middle of the {inst.start_room}. The house has these rooms: "
        f"{', '.join(inst.rooms)}. {rooms} You can go to any room, and to a place in the "
        f"room you are in{hint}."
    )


def look(inst: Instance, state: State) -> str:
    """``look``: where the agent is, what it sees, what it holds."""
    held = state.holding
    hand = f" You are holding the {held}." if held else " Your hands are empty."
    if state.loc == state.room:
        return f"You are in the middle of the {state.room}; {describe_room(inst, state.room)}{hand}"
    return f"You are at the {state.loc} in the {state.room}. " + \
        describe_place(inst, state, state.loc) + hand


def _fail(state: State, why: str) -> StepResult:
    return StepResult(state, f"Nothing happens: {why}", False)


def _set(state: State, name: str, **changes: object) -> State:
    objs = tuple(replace(o, **changes) if o.name == name else o for o in state.objects)  # type: ignore[arg-type]
    return replace(state, objects=objs)


def parse_action(action: str) -> tuple[str, str]:
    """``("go", "cabinet 2")`` from ``"go cabinet 2"`` (lower-cased, spaces squeezed)."""
    words = " ".join(str(action).lower().replace("_", " ").split())
    verb, _, arg = words.partition(" ")
    for prefix in ("to ", "the "):
        arg = arg.removeprefix(prefix)
    return verb, arg.strip()


def step(inst: Instance, state: State, action: str) -> StepResult:
    """Apply one action; an invalid one returns the same state and the reason."""
    verb, arg = parse_action(action)
    if verb not in VERBS:
        return _fail(state, f"unknown action {verb!r}; actions: {', '.join(VERBS)}.")
    if verb == "look":
        return StepResult(state, look(inst, state), True)
    if not arg:
        return _fail(state, f"{verb} needs a target.")
    if verb == "go":
        return _go(inst, state, arg)
    if verb in ("open", "close"):
        return _open_close(inst, state, verb, arg)
    if verb == "take":
        return _take(inst, state, arg)
    if verb == "put":
        return _put(inst, state, arg)
    return _treat(inst, state, verb, arg)


def _go(inst: Instance, state: State, arg: str) -> StepResult:
    if arg in inst.rooms:
        if state.loc == arg:
            return _fail(state, f"you are already in the middle of the {arg}.")
        new = replace(state, loc=arg, room=arg)
        return StepResult(new, f"You go to the {arg}; {describe_room(inst, arg)}", True)
    r = inst.receptacle(arg)
    if r is None:
        return _fail(state, f"there is no room or place called {arg!r}.")
    if r.room != state.room:
        return _fail(state, f"the {arg} is in the {r.room}; go to the {r.room} first.")
    if state.loc == arg:
        return _fail(state, f"you are already at the {arg}.")
    new = replace(state, loc=arg)
    return StepResult(new, f"You arrive at the {arg}. {describe_place(inst, new, arg)}", True)


def _open_close(inst: Instance, state: State, verb: str, arg: str) -> StepResult:
    r = inst.receptacle(arg)
    if r is None:
        return _fail(state, f"there is no {arg!r} to {verb}.")
    if state.loc != arg:
        return _fail(state, f"you are not at the {arg}; go to it first.")
    if not r.openable:
        return _fail(state, f"the {arg} does not open.")
    is_open = arg in state.opened
    if verb == "open":
        if is_open:
            return _fail(state, f"the {arg} is already open.")
        new = replace(state, opened=state.opened | {arg})
        return StepResult(new, f"You open the {arg}. {describe_place(inst, new, arg)}", True)
    if not is_open:
        return _fail(state, f"the {arg} is already closed.")
    return StepResult(replace(state, opened=state.opened - {arg}), f"You close the {arg}.", True)


def _reachable(inst: Instance, state: State, place: str) -> bool:
    r = inst.receptacle(place)
    return r is not None and (not r.openable or place in state.opened)


def _take(inst: Instance, state: State, arg: str) -> StepResult:
    o = state.obj(arg)
    if o is None:
        return _fail(state, f"there is no object called {arg!r}.")
    if state.holding is not None:
        return _fail(state, f"your hands are full (you hold the {state.holding}); put it first.")
    if o.place != state.loc:
        return _fail(state, f"the {arg} is not here.")
    if not _reachable(inst, state, state.loc):
        return _fail(state, f"the {state.loc} is closed; open it first.")
    new = _set(state, arg, place=HAND)
    return StepResult(new, f"You pick up the {arg} from the {state.loc}.", True)


def _put(inst: Instance, state: State, arg: str) -> StepResult:
    if state.holding != arg:
        held = f"you hold the {state.holding}" if state.holding else "your hands are empty"
        return _fail(state, f"you are not holding the {arg} ({held}).")
    if inst.receptacle(state.loc) is None:
        return _fail(state, "you are not at a place to put things; go to one first.")
    if not _reachable(inst, state, state.loc):
        return _fail(state, f"the {state.loc} is closed; open it first.")
    new = _set(state, arg, place=state.loc)
    prep = inst.preposition(state.loc)
    return StepResult(new, f"You put the {arg} {prep} the {state.loc}.", True)


def _treat(inst: Instance, state: State, verb: str, arg: str) -> StepResult:
    appliance = TREATMENT_APPLIANCE[verb]
    if state.holding != arg:
        return _fail(state, f"you must hold the {arg} to {verb} it.")
    here = inst.receptacle(state.loc)
    if here is None or here.kind != appliance:
        return _fail(state, f"you can {verb} things only at a {appliance}.")
    changes = {"clean": {"clean": True}, "heat": {"hot": True, "cold": False},
               "cool": {"cold": True, "hot": False}}[verb]
    new = _set(state, arg, **changes)
    past = {"clean": "clean", "heat": "heat", "cool": "cool"}[verb]
    return StepResult(new, f"You {past} the {arg} using the {state.loc}.", True)


def delivered(inst: Instance, state: State) -> int:
    """How many objects currently satisfy the goal (kind, property, place)."""
    g = inst.goal
    prop = PROPERTY.get(g.kind)
    count = 0
    for o in state.objects:
        if inst.object_kind(o.name) != g.obj or o.place != g.target:
            continue
        if prop is None or getattr(o, prop):
            count += 1
    return count


def goal_reached(inst: Instance, state: State) -> bool:
    """Whether the goal holds in ``state``."""
    return delivered(inst, state) >= inst.goal.count


def valid_actions(inst: Instance, state: State) -> list[str]:
    """Every action that is valid in ``state`` (look excluded: it changes nothing)."""
    out = [f"go {room}" for room in inst.rooms if room != state.loc]
    out += [f"go {r.name}" for r in inst.in_room(state.room) if r.name != state.loc]
    here = inst.receptacle(state.loc)
    if here is not None:
        if here.openable:
            out.append(f"{'close' if state.loc in state.opened else 'open'} {state.loc}")
        held = state.holding
        if _reachable(inst, state, state.loc):
            if held is None:
                out += [f"take {name}" for name in state.at(state.loc)]
            else:
                out.append(f"put {held}")
        if held is not None:
            for verb, kind in TREATMENT_APPLIANCE.items():
                if here.kind == kind:
                    out.append(f"{verb} {held}")
    return out


@dataclass(frozen=True)
class Verdict:
    """A replayed action list: success, where it was reached, counts."""

    success: bool
    solved_at: int | None
    steps: int
    invalid: int
    delivered: int


def verify(inst: Instance, actions: list[str]) -> Verdict:
    """Replay ``actions`` from the start; the goal counts once reached (later moves ignored)."""
    state = initial_state(inst)
    solved_at: int | None = 0 if goal_reached(inst, state) else None
    invalid = 0
    best = delivered(inst, state)
    for i, action in enumerate(actions, start=1):
        result = step(inst, state, action)
        invalid += not result.valid
        state = result.state
        best = max(best, delivered(inst, state))
        if solved_at is None and goal_reached(inst, state):
            solved_at = i
    return Verdict(solved_at is not None, solved_at, len(actions), invalid, best)


def replay(inst: Instance, actions: list[str]) -> State:
    """The state after ``actions`` (invalid ones change nothing)."""
    state = initial_state(inst)
    for action in actions:
        state = step(inst, state, action).state
    return state
