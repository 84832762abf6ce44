"""Reference planners without a solver: ``greedy`` (local choices) and ``random``.

Why: the benchmark needs agents with known behaviour between the oracle (always
feasible) and nothing. ``greedy`` plans stop by stop, taking the earliest feasible
nearby venue that satisfies the constraints it can see *locally* (opening hours, timed
entries, meal and visit windows, exclusions, cuisines, ratings, forbidden modes, hotel
preferences); it ignores every constraint that couples choices across the trip
(budgets, walking limits, precedence, either-or, counts, if-then, booking lead,
connection buffers). The scenario generator picks global constraints that this plan
breaks and draws a scenario again when it still passes, so on the shipped set it is
infeasible by construction: a yardstick for "local choices are not enough".
``random`` picks venues, modes and waits at random but keeps the requested shape.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from environments.worldtravel.model import (
    MODES,
    ROOMS,
    Attraction,
    Hotel,
    Link,
    Restaurant,
    World,
    hhmm,
    open_intervals,
    weekday,
)
from environments.worldtravel.scenario import ROOM_CAPACITY, Scenario

Plan = dict[str, Any]


def _params(sc: Scenario, kind: str) -> list[dict[str, Any]]:
    return [c.params for c in sc.constraints if c.kind == kind]


def _hotel_ok(sc: Scenario, h: Hotel, room: str, nights: int) -> bool:
    if ROOM_CAPACITY[room] < sc.party or h.min_nights > nights:
        return False
    if any(p["room"] != room for p in _params(sc, "room_type")):
        return False
    if any(
        p["target"] == "hotel" and h.rating < p["min_rating"] for p in _params(sc, "rating_floor")
    ):
        return False
    return all(getattr(h, k) == v for p in _params(sc, "hotel_rules") for k, v in p.items())


def _lodging(world: World, sc: Scenario) -> list[dict[str, Any]]:
    out = []
    for city, nights in sc.stays():
        dates = [world.date_index(sc.date(n)) for n in nights]
        opts = [
            (sum(h.prices[r][i] for i in dates), h.id, r)
            for h in world.hotels
            if h.city == city
            for r in h.prices
            if _hotel_ok(sc, h, r, len(nights))
        ]
        if not opts:  # nothing fits the preferences: take the cheapest room that sleeps everyone
            opts = [
                (sum(h.prices[r][i] for i in dates), h.id, r)
                for h in world.hotels
                if h.city == city
                for r in h.prices
                if ROOM_CAPACITY[r] >= sc.party
            ]
        _, hotel, room = min(opts)
        out.append({"city": city, "hotel": hotel, "room": room, "nights": nights})
    return out


def _earliest(rec: Attraction | Restaurant, date: str, arrive: int, lo: int, hi: int) -> int | None:
    """Earliest start >= arrive (and in [lo, hi]) at which the whole visit fits."""
    need = rec.visit_minutes if isinstance(rec, Attraction) else rec.meal_minutes
    slots = rec.timed_entry if isinstance(rec, Attraction) else rec.seatings
    for a, b in open_intervals(rec, date):
        first = max(arrive, a, lo)
        if slots:
            later = [s for s in slots if s >= first and s + need <= b and s <= hi]
            if later:
                return later[0]
        elif first + need <= b and first <= hi:
            return first
    return None


class _Greedy:
    def __init__(self, world: World, sc: Scenario) -> None:
        self.w, self.sc = world, sc
        self.used: set[str] = set()
        forbid = {p["forbid"] for p in _params(sc, "transport_mode") if p["scope"] == "local"}
        self.modes = [m for m in ("walk", "transit", "taxi") if m not in forbid] or ["walk"]

    def mode_for(self, city: str, a: int, b: int) -> tuple[str, int]:
        times = self.w.city(city).times
        if "walk" in self.modes and times["walk"][a][b] <= 20:
            return "walk", times["walk"][a][b]
        best = min((times[m][a][b], m) for m in self.modes)
        return best[1], best[0]

    def window(self, d: int, slot: str) -> tuple[int, int]:
        for p in _params(self.sc, "meal_window"):
            if p["day"] == d and p["meal"] == slot:
                return int(p["from"]), int(p["to"])
        return 0, 24 * 60

    def allowed(self, rec: Attraction | Restaurant, slot: str) -> bool:
        if rec.id in self.used or any(p["id"] == rec.id for p in _params(self.sc, "exclude")):
            return False
        target = "attraction" if slot == "attraction" else "restaurant"
        if any(
            p["target"] == target and rec.rating < p["min_rating"]
            for p in _params(self.sc, "rating_floor")
        ):
            return False
        if isinstance(rec, Restaurant):
            return all(
                rec.cuisine in p["cuisines"]
                for p in _params(self.sc, "cuisine")
                if p["meal"] == slot
            )
        return True

    def venue(self, d: int, slot: str, city: str, here: int, t: int) -> tuple[Any, int, str, int]:
        date = self.sc.date(d)
        pool: list[Attraction | Restaurant] = list(
            self.w.attractions if slot == "attraction" else self.w.restaurants
        )
        pool = [r for r in pool if r.city == city and self.allowed(r, slot)]
        lo, hi = self.window(d, slot)
        if slot == "attraction":
            wanted = [
                p
                for p in _params(self.sc, "visit_window")
                if p["day"] == d and p["attraction"] not in self.used
            ]
            for p in wanted:
                rec = self.w.get(p["attraction"])
                if isinstance(rec, Attraction):
                    mode, minutes = self.mode_for(city, here, rec.location)
                    start = _earliest(rec, date, t + minutes, int(p["from"]), int(p["to"]))
                    if start is not None:
                        return rec, start, mode, minutes
        best: tuple[int, int, str, Any, str, int] | None = None
        for rec in pool:
            mode, minutes = self.mode_for(city, here, rec.location)
            start = _earliest(rec, date, t + minutes, lo, hi)
            if start is not None and (best is None or (start, minutes, rec.id) < best[:3]):
                best = (start, minutes, rec.id, rec, mode, minutes)
        if best is None:  # a dead end: take the nearest venue anyway (it will fail checks)
            rec = min(
                pool
                or [
                    r
                    for r in (self.w.attractions if slot == "attraction" else self.w.restaurants)
                    if r.city == city
                ],
                key=lambda r: (self.w.city(city).times["walk"][here][r.location], r.id),
            )
            mode, minutes = self.mode_for(city, here, rec.location)
            return rec, t + minutes, mode, minutes
        return best[3], best[0], best[4], best[5]

    def plan(self) -> Plan:
        w, sc = self.w, self.sc
        lodging = _lodging(w, sc)
        hotel_of = {n: x["hotel"] for x in lodging for n in x["nights"]}
        leave_after = max(
            [int(p["leave_after"]) for p in _params(sc, "day_bounds")] + [8 * 60 + 30]
        )
        days = []
        for d in range(1, sc.days + 1):
            stops: list[dict[str, Any]] = []
            if d == 1:
                city = sc.cities[0]
                stops.append({"kind": "station", "id": w.city(city).station})
                t, here = sc.arrival, len(w.city(city).nodes) - 1
            else:
                hotel = w.get(hotel_of[d - 1])
                assert isinstance(hotel, Hotel)
                city = hotel.city
                stops.append({"kind": "hotel", "id": hotel.id})
                t, here = min(leave_after, hotel.check_out), hotel.location
            for j, slot in enumerate(sc.skeleton[d - 1]):
                if slot == "link":
                    station = len(w.city(city).nodes) - 1
                    mode, minutes = self.mode_for(city, here, station)
                    stops[-1]["end"], stops[-1]["transport_to_next"] = hhmm(t), mode
                    at = t + minutes
                    required = {
                        p["require"]
                        for p in _params(sc, "transport_mode")
                        if p["scope"] == "intercity"
                    }
                    links = sorted(
                        (
                            x
                            for x in w.links
                            if x.origin == sc.cities[0]
                            and x.destination == sc.cities[-1]
                            and x.depart >= at
                            and x.weekdays[weekday(sc.date(d))]
                            and (not required or x.mode in required)
                        ),
                        key=lambda x: (x.depart, x.id),
                    )
                    link: Link = (
                        links[0]
                        if links
                        else min(
                            (
                                x
                                for x in w.links
                                if x.origin == sc.cities[0] and x.destination == sc.cities[-1]
                            ),
                            key=lambda x: abs(x.depart - at),
                        )
                    )
                    stops.append(
                        {
                            "kind": "link",
                            "id": link.id,
                            "fare_class": "economy",
                            "start": hhmm(link.depart),
                            "end": hhmm(link.arrive),
                        }
                    )
                    city, t, here = sc.cities[-1], link.arrive, len(w.city(sc.cities[-1]).nodes) - 1
                    continue
                rec, start, mode, _ = self.venue(d, slot, sc.slot_city(d, j), here, t)
                self.used.add(rec.id)
                stops[-1]["end"], stops[-1]["transport_to_next"] = hhmm(min(t, start)), mode
                need = rec.visit_minutes if isinstance(rec, Attraction) else rec.meal_minutes
                stop: dict[str, Any] = {
                    "kind": "attraction" if slot == "attraction" else "restaurant",
                    "id": rec.id,
                    "start": hhmm(start),
                    "end": hhmm(min(start + need, 24 * 60 - 1)),
                }
                if slot != "attraction":
                    stop["meal"] = slot
                stops.append(stop)
                t, here = min(start + need, 24 * 60 - 1), rec.location
            if d == sc.days:
                station = len(w.city(city).nodes) - 1
                mode, minutes = self.mode_for(city, here, station)
                stops[-1]["end"], stops[-1]["transport_to_next"] = hhmm(t), mode
                stops.append(
                    {
                        "kind": "station",
                        "id": w.city(city).station,
                        "start": hhmm(min(t + minutes, 24 * 60 - 1)),
                    }
                )
            else:
                hotel = w.get(hotel_of[d])
                assert isinstance(hotel, Hotel)
                mode, minutes = self.mode_for(city, here, hotel.location)
                stops[-1]["end"], stops[-1]["transport_to_next"] = hhmm(t), mode
                arrive = min(max(t + minutes, hotel.check_in), 24 * 60 - 1)
                stops.append({"kind": "hotel", "id": hotel.id, "start": hhmm(arrive)})
            days.append({"day": d, "stops": stops})
        return {"lodging": lodging, "days": days}


def greedy_plan(world: World, scenario: Scenario) -> Plan:
    """The greedy reference agent's itinerary (deterministic)."""
    return _Greedy(world, scenario).plan()


def random_plan(world: World, scenario: Scenario, seed: int = 0) -> Plan:
    """A random itinerary of the requested shape (venues, modes and waits at random)."""
    rng = np.random.default_rng([seed, sum(map(ord, scenario.id))])
    w, sc = world, scenario
    lodging = []
    for city, nights in sc.stays():
        hotels = [h for h in w.hotels if h.city == city]
        h = hotels[int(rng.integers(len(hotels)))]
        rooms = [r for r in ROOMS if r in h.prices]
        lodging.append(
            {
                "city": city,
                "hotel": h.id,
                "room": rooms[int(rng.integers(len(rooms)))],
                "nights": nights,
            }
        )
    hotel_of = {n: x["hotel"] for x in lodging for n in x["nights"]}
    days = []
    for d in range(1, sc.days + 1):
        t = sc.arrival if d == 1 else int(rng.integers(7 * 60, 11 * 60))
        first = (
            {"kind": "station", "id": w.city(sc.cities[0]).station}
            if d == 1
            else {"kind": "hotel", "id": hotel_of[d - 1]}
        )
        stops: list[dict[str, Any]] = [first]
        for j, slot in enumerate(sc.skeleton[d - 1]):
            stops[-1]["end"] = hhmm(min(t, 1439))
            stops[-1]["transport_to_next"] = MODES[int(rng.integers(3))]
            t += int(rng.integers(10, 60))
            if slot == "link":
                links = [
                    x
                    for x in w.links
                    if x.origin == sc.cities[0] and x.destination == sc.cities[-1]
                ]
                link = links[int(rng.integers(len(links)))]
                stops.append(
                    {
                        "kind": "link",
                        "id": link.id,
                        "fare_class": "economy",
                        "start": hhmm(link.depart),
                        "end": hhmm(link.arrive),
                    }
                )
                t = link.arrive
                continue
            city = sc.slot_city(d, j)
            pool: list[Any] = [
                v
                for v in (w.attractions if slot == "attraction" else w.restaurants)
                if v.city == city
            ]
            rec = pool[int(rng.integers(len(pool)))]
            need = rec.visit_minutes if slot == "attraction" else rec.meal_minutes
            stop = {
                "kind": "attraction" if slot == "attraction" else "restaurant",
                "id": rec.id,
                "start": hhmm(min(t, 1439)),
                "end": hhmm(min(t + need, 1439)),
            }
            if slot != "attraction":
                stop["meal"] = slot
            stops.append(stop)
            t += need
        stops[-1]["end"] = hhmm(min(t, 1439))
        stops[-1]["transport_to_next"] = MODES[int(rng.integers(3))]
        t += int(rng.integers(10, 60))
        last = (
            {"kind": "station", "id": w.city(sc.cities[-1]).station}
            if d == sc.days
            else {"kind": "hotel", "id": hotel_of[d]}
        )
        last["start"] = hhmm(min(t, 1439))
        stops.append(last)
        days.append({"day": d, "stops": stops})
    return {"lodging": lodging, "days": days}
