"""Scenario and constraint records: the constraint language is data.

A constraint is a typed JSON record ``{"id", "kind", "category", "params", "text"}``; the
checker and the CP-SAT oracle both dispatch on ``kind`` and read only ``params``, so a
scenario file is the complete, machine-readable statement of a task. ``text`` is the
natural-language sentence the request uses for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from environments.worldtravel.model import add_days, plain

# kind -> category (temporal, logical, resource, preference)
KINDS: dict[str, str] = {
    # base ("physics") constraints: one instance per trip in every scenario, each
    # evaluating every day of the trip
    "skeleton": "logical",
    "opening_hours": "temporal",
    "travel_time": "temporal",
    "timed_entry": "temporal",
    "min_duration": "temporal",
    "lodging": "temporal",
    # sampled constraints
    "meal_window": "temporal",
    "visit_window": "temporal",
    "day_bounds": "temporal",
    "booking_lead": "temporal",
    "connection_buffer": "temporal",
    "precedence": "logical",
    "either_or": "logical",
    "if_then": "logical",
    "count": "logical",
    "all_different": "logical",
    "exclude": "logical",
    "budget_total": "resource",
    "budget_category": "resource",
    "walk_limit": "resource",
    "cuisine": "preference",
    "room_type": "preference",
    "transport_mode": "preference",
    "rating_floor": "preference",
    "hotel_rules": "preference",
}
BASE_DAY_KINDS: tuple[str, ...] = ("skeleton", "opening_hours", "travel_time", "timed_entry")
"""Base kinds checked on every day (one instance per trip; an instance with a ``day``
param checks that day only, which older scenario files used)."""
BASE_KINDS: tuple[str, ...] = (*BASE_DAY_KINDS, "min_duration", "lodging")
"""Every scenario's base ("physics") constraints: one instance each per trip (``lodging``
only when the trip has a night)."""
GLOBAL_KINDS: tuple[str, ...] = (
    "budget_total",
    "budget_category",
    "count",
    "all_different",
    "precedence",
    "either_or",
    "if_then",
)
"""Kinds that couple choices at different stops (of different days when the trip has
several): no single stop's choice decides them, so a planner that optimises stop by stop
cannot see them. Every generated scenario carries at least three."""
ROOM_CAPACITY: dict[str, int] = {"single": 1, "double": 2, "suite": 4}
COST_CATEGORIES: tuple[str, ...] = ("lodging", "food", "activities", "transport")
SLOT_KINDS: tuple[str, ...] = ("attraction", "lunch", "dinner", "link")


@dataclass(frozen=True)
class Constraint:
    """One constraint instance (see ``KINDS`` for the kinds and their categories)."""

    id: str
    kind: str
    params: dict[str, Any]
    text: str

    @property
    def category(self) -> str:
        """temporal / logical / resource / preference."""
        return KINDS[self.kind]

    def to_record(self) -> dict[str, Any]:
        """JSON record (category included so files are self-describing)."""
        return {
            "id": self.id,
            "kind": self.kind,
            "category": self.category,
            "params": plain(self.params),
            "text": self.text,
        }

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Constraint:
        """Inverse of :meth:`to_record`."""
        return cls(
            id=record["id"], kind=record["kind"], params=dict(record["params"]), text=record["text"]
        )


@dataclass(frozen=True)
class Scenario:
    """A trip request: fixed frame (cities, dates, endpoints, day shapes) plus constraints.

    Days are numbered from 1. With two cities the traveller moves on ``transfer_day`` by
    the ``link`` slot of that day's skeleton; night ``n`` (after day ``n``) is spent in the
    city where day ``n`` ends. The trip starts at the first city's station at ``arrival``
    on day 1 and ends at the last city's station by ``departure`` on the last day.
    """

    id: str
    family: str
    cities: list[str]
    start_date: str
    days: int
    party: int
    arrival: int
    departure: int
    transfer_day: int | None
    skeleton: list[list[str]]
    constraints: list[Constraint]
    request: str = ""
    reference_plan: dict[str, Any] | None = None
    reference_cost: int | None = None
    plans_found: int = 0
    plan_cap: int = 0
    optimal: bool = False
    coupling: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def n_constraints(self) -> int:
        """Number of constraint instances (the planning horizon measure)."""
        return len(self.constraints)

    @property
    def n_global(self) -> int:
        """Number of constraint instances of a :data:`GLOBAL_KINDS` kind."""
        return sum(c.kind in GLOBAL_KINDS for c in self.constraints)

    def date(self, day: int) -> str:
        """ISO date of trip day ``day`` (1-based)."""
        return add_days(self.start_date, day - 1)

    def nights(self) -> list[int]:
        """Night numbers (1..days-1)."""
        return list(range(1, self.days))

    def night_city(self, night: int) -> str:
        """City where night ``night`` is spent."""
        return self.slot_city(night, len(self.skeleton[night - 1]))

    def slot_city(self, day: int, slot: int) -> str:
        """City of slot index ``slot`` of ``day`` (slots before/after a link differ).

        ``slot`` may be ``len(skeleton)`` for the day's end point.
        """
        if self.transfer_day is None or day < self.transfer_day:
            return self.cities[0]
        if day > self.transfer_day:
            return self.cities[-1]
        link_at = self.skeleton[day - 1].index("link")
        return self.cities[0] if slot < link_at else self.cities[-1]

    def day_start_city(self, day: int) -> str:
        """City where ``day`` begins."""
        return self.slot_city(day, -1) if day != self.transfer_day else self.cities[0]

    def stays(self) -> list[tuple[str, list[int]]]:
        """(city, nights) per city stay, in trip order."""
        out: list[tuple[str, list[int]]] = []
        for night in self.nights():
            city = self.night_city(night)
            if out and out[-1][0] == city:
                out[-1][1].append(night)
            else:
                out.append((city, [night]))
        return out

    def to_record(self) -> dict[str, Any]:
        """JSON record (what ``generate`` writes)."""
        return {
            "id": self.id,
            "family": self.family,
            "cities": list(self.cities),
            "start_date": self.start_date,
            "days": self.days,
            "party": self.party,
            "arrival": self.arrival,
            "departure": self.departure,
            "transfer_day": self.transfer_day,
            "skeleton": [list(s) for s in self.skeleton],
            "n_constraints": self.n_constraints,
            "constraints": [c.to_record() for c in self.constraints],
            "request": self.request,
            "reference_plan": self.reference_plan,
            "reference_cost": self.reference_cost,
            "plans_found": self.plans_found,
            "plan_cap": self.plan_cap,
            "optimal": self.optimal,
            "n_global": self.n_global,
            "coupling": plain(self.coupling),
            "meta": plain(self.meta),
        }

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Scenario:
        """Inverse of :meth:`to_record`."""
        return cls(
            id=record["id"],
            family=record["family"],
            cities=list(record["cities"]),
            start_date=record["start_date"],
            days=int(record["days"]),
            party=int(record["party"]),
            arrival=int(record["arrival"]),
            departure=int(record["departure"]),
            transfer_day=record["transfer_day"],
            skeleton=[list(s) for s in record["skeleton"]],
            constraints=[Constraint.from_record(c) for c in record["constraints"]],
            request=record.get("request", ""),
            reference_plan=record.get("reference_plan"),
            reference_cost=record.get("reference_cost"),
            plans_found=int(record.get("plans_found", 0)),
            plan_cap=int(record.get("plan_cap", 0)),
            optimal=bool(record.get("optimal")),
            coupling=dict(record.get("coupling") or {}),
            meta=dict(record.get("meta") or {}),
        )
