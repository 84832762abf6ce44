"""The itinerary format the agent submits, and a parser that never raises.

Schema (published to the agent by :data:`PLAN_SCHEMA_TEXT`)::

    {"lodging": [{"city": "AVA", "hotel": "AVA-H03", "room": "double", "nights": [1, 2]}],
     "days": [{"day": 1, "stops": [
         {"kind": "station", "id": "AVA-ST", "end": "09:30", "transport_to_next": "transit"},
         {"kind": "attraction", "id": "AVA-A05", "start": "10:00", "end": "11:30",
          "transport_to_next": "walk"},
         {"kind": "restaurant", "id": "AVA-R07", "meal": "lunch", "start": "12:00",
          "end": "13:00", "transport_to_next": "taxi"},
         {"kind": "link", "id": "TR-AVA-BRI-1400", "fare_class": "economy",
          "start": "14:00", "end": "16:10", "transport_to_next": "walk"},
         {"kind": "hotel", "id": "BRI-H01", "start": "21:00"}]}]}

Malformed input is parsed as far as possible: a bad stop keeps its readable fields (the
rest become None) and a bad day is recorded as missing, so the checker fails exactly the
constraints that depend on what is broken, with a reason.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from environments.worldtravel.model import MODES, parse_hhmm

PLAN_SCHEMA_TEXT = """\
Submit ONE JSON object (no prose) of this shape:
{"lodging": [{"city": CITY_ID, "hotel": HOTEL_ID, "room": "single"|"double"|"suite",
              "nights": [NIGHT, ...]}],            # night n = the night after day n
 "days": [{"day": N, "stops": [STOP, ...]}, ...]}  # one entry per trip day, stops in order
STOP = {"kind": "station"|"hotel"|"attraction"|"restaurant"|"link", "id": ID,
        "start": "HH:MM", "end": "HH:MM", "transport_to_next": "walk"|"transit"|"taxi",
        "meal": "lunch"|"dinner" (restaurants), "fare_class": "economy"|"business" (links)}
Each day starts with the place you wake up (day 1: the arrival station, with "end" = when
you leave it; later days: last night's hotel, with "end") and ends with tonight's hotel
(with "start" = arrival) or, on the last day, the departure station (with "start").
A link stop's start/end are its timetable departure/arrival; the leg into a link goes to
the origin station, the leg out of it leaves from the destination station. Every stop
except the last names "transport_to_next"."""


@dataclass
class Stop:
    """One parsed stop; unreadable fields are None."""

    kind: str | None
    id: str | None
    start: int | None
    end: int | None
    mode: str | None
    meal: str | None = None
    fare_class: str | None = None


@dataclass
class Stay:
    """One lodging booking."""

    city: str | None
    hotel: str | None
    room: str | None
    nights: list[int]


@dataclass
class Plan:
    """A parsed itinerary: days that could not be read are absent from ``days``."""

    lodging: list[Stay]
    days: dict[int, list[Stop]]
    errors: list[str] = field(default_factory=list)
    lodging_ok: bool = True


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def _load(raw: Any) -> Any:
    if not isinstance(raw, str):
        return raw
    text = raw.strip()
    candidates = [text] + [m.group(1) for m in _FENCE.finditer(text)]
    if "{" in text and "}" in text:
        candidates.append(text[text.index("{") : text.rindex("}") + 1])
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except (ValueError, RecursionError):
            continue
    return None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _stop(raw: Any) -> Stop:
    if not isinstance(raw, dict):
        return Stop(None, None, None, None, None)
    mode = raw.get("transport_to_next")
    return Stop(
        kind=_str(raw.get("kind")),
        id=_str(raw.get("id")),
        start=parse_hhmm(raw.get("start")),
        end=parse_hhmm(raw.get("end")),
        mode=mode if mode in MODES else None,
        meal=_str(raw.get("meal")),
        fare_class=_str(raw.get("fare_class")),
    )


def parse_plan(raw: Any) -> Plan | None:
    """Parse a submission (JSON text, fenced JSON, or an already-decoded object).

    Returns None when nothing itinerary-like can be read (not delivered); otherwise a
    :class:`Plan` whose ``errors`` list what was dropped and why.
    """
    data = _load(raw)
    if not isinstance(data, dict) or not isinstance(data.get("days"), list):
        return None
    errors: list[str] = []
    days: dict[int, list[Stop]] = {}
    seen: set[int] = set()
    for i, day in enumerate(data["days"]):
        number = day.get("day") if isinstance(day, dict) else None
        stops = day.get("stops") if isinstance(day, dict) else None
        if not isinstance(number, int) or isinstance(number, bool) or not isinstance(stops, list):
            errors.append(f"days[{i}] is not {{'day': int, 'stops': list}}")
            continue
        if number in seen:
            errors.append(f"day {number} appears twice")
            days.pop(number, None)
            continue
        seen.add(number)
        days[number] = [_stop(s) for s in stops]
    lodging: list[Stay] = []
    lodging_ok = True
    raw_lodging = data.get("lodging", [])
    if not isinstance(raw_lodging, list):
        errors.append("lodging is not a list")
        raw_lodging, lodging_ok = [], False
    for j, stay in enumerate(raw_lodging):
        if not isinstance(stay, dict):
            errors.append(f"lodging[{j}] is not an object")
            lodging_ok = False
            continue
        nights = stay.get("nights")
        good = isinstance(nights, list) and all(
            isinstance(n, int) and not isinstance(n, bool) for n in nights
        )
        if not good:
            errors.append(f"lodging[{j}].nights is not a list of integers")
            lodging_ok = False
        lodging.append(
            Stay(
                city=_str(stay.get("city")),
                hotel=_str(stay.get("hotel")),
                room=_str(stay.get("room")),
                nights=[int(n) for n in nights] if isinstance(nights, list) and good else [],
            )
        )  # type: ignore[arg-type]
    return Plan(lodging=lodging, days=days, errors=errors, lodging_ok=lodging_ok)
