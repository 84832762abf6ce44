"""The household world: rooms, receptacles, objects and goals, as plain JSON-able data.

An :class:`Instance` is everything that defines one episode (ALFWorld-like: a text house
with receptacles that may be closed, objects inside them, and one goal such as "put a clean
mug in coffeemachine 1"). It travels as a dict (:meth:`Instance.to_dict` /
:meth:`Instance.from_dict`), so a task's metadata or a scripted oracle can rebuild it
exactly. The rules that change it live in :mod:`.sim`; the seeded generator in
:mod:`.generate`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

GoalKind = Literal["place", "clean", "heat", "cool", "two"]
GOAL_KINDS: tuple[GoalKind, ...] = ("place", "clean", "heat", "cool", "two")

TREATMENT_APPLIANCE = {"clean": "sinkbasin", "heat": "microwave", "cool": "fridge"}
"""Which receptacle kind performs each treatment (ALFWorld's clean/heat/cool)."""

PROPERTY = {"clean": "clean", "heat": "hot", "cool": "cold"}
"""The object property a treatment sets."""


@dataclass(frozen=True)
class Receptacle:
    """A place in a room the agent can go to: ``cabinet 2`` in the kitchen."""

    name: str
    kind: str
    room: str
    openable: bool


@dataclass(frozen=True)
class Goal:
    """``count`` objects of ``kind``, each with ``property`` (if any), in ``target``."""

    kind: GoalKind
    obj: str
    target: str
    count: int = 1

    @property
    def treatment(self) -> str | None:
        """``clean``/``heat``/``cool`` for treatment goals, else None."""
        return self.kind if self.kind in TREATMENT_APPLIANCE else None

    @property
    def required(self) -> str | None:
        """The property each delivered object must have (``clean``/``hot``/``cold``)."""
        return PROPERTY.get(self.kind)

    def text(self, preposition: str) -> str:
        """The goal as the agent reads it."""
        if self.kind == "two":
            return f"put two {self.obj}s {preposition} {self.target}"
        adjective = {"clean": "clean ", "heat": "hot ", "cool": "cold "}.get(self.kind, "")
        article = "an" if (adjective or self.obj)[0] in "aeiou" else "a"
        return f"put {article} {adjective}{self.obj} {preposition} {self.target}"


@dataclass(frozen=True)
class Instance:
    """One episode's world: rooms, receptacles, objects (name -> kind, start place), goal."""

    seed: int
    rooms: tuple[str, ...]
    receptacles: tuple[Receptacle, ...]
    objects: tuple[tuple[str, str, str], ...]  # (name, kind, start receptacle)
    start_room: str
    goal: Goal
    optimal: int = 0
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def receptacle(self, name: str) -> Receptacle | None:
        """The receptacle called ``name``, or None."""
        for r in self.receptacles:
            if r.name == name:
                return r
        return None

    def in_room(self, room: str) -> list[Receptacle]:
        """The receptacles of ``room`` in listing order."""
        return [r for r in self.receptacles if r.room == room]

    def object_kind(self, name: str) -> str | None:
        """The kind of object ``name`` (``mug`` for ``mug 1``), or None."""
        for obj, kind, _ in self.objects:
            if obj == name:
                return kind
        return None

    def preposition(self, receptacle: str) -> str:
        """``in`` for containers, ``on`` for surfaces (how the text names a placement)."""
        r = self.receptacle(receptacle)
        return "in" if r is not None and (r.openable or r.kind in CONTAINERS) else "on"

    @property
    def goal_text(self) -> str:
        """The goal sentence shown to the agent."""
        return self.goal.text(self.preposition(self.goal.target))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able record that :meth:`from_dict` turns back into the same instance."""
        return {
            "seed": self.seed,
            "rooms": list(self.rooms),
            "receptacles": [[r.name, r.kind, r.room, r.openable] for r in self.receptacles],
            "objects": [list(o) for o in self.objects],
            "start_room": self.start_room,
            "goal": {"kind": self.goal.kind, "obj": self.goal.obj, "target": self.goal.target,
                     "count": self.goal.count},
            "optimal": self.optimal,
        }

    @classmethod
    def from_dict(cls, record: dict[str, Any]) -> Instance:
        """The instance a :meth:`to_dict` record describes."""
        g = record["goal"]
        return cls(
            seed=int(record["seed"]),
            rooms=tuple(record["rooms"]),
            receptacles=tuple(Receptacle(str(n), str(k), str(room), bool(o))
                              for n, k, room, o in record["receptacles"]),
            objects=tuple((str(n), str(k), str(p)) for n, k, p in record["objects"]),
            start_room=str(record["start_room"]),
            goal=Goal(kind=g["kind"], obj=g["obj"], target=g["target"], count=int(g["count"])),
            optimal=int(record.get("optimal", 0)),
        )


CONTAINERS = frozenset({"sinkbasin", "microwave", "fridge", "coffeemachine", "garbagecan"})
"""Receptacle kinds the text puts things *in* even when they do not open."""
