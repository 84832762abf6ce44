"""Deterministic constraint checker, independent of the CP-SAT oracle.

Why independent: the oracle's reference plans are only trustworthy if a second, simple
implementation of the same semantics accepts them. This module walks the submitted
itinerary directly (no solver, no shared model code beyond the world records) and returns
one result per constraint with a one-line reason. Anything malformed fails the constraints
that depend on it and nothing else; no input makes it raise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from environments.worldtravel.model import (
    Attraction,
    Hotel,
    Link,
    Restaurant,
    World,
    hhmm,
    open_intervals,
    weekday,
)
from environments.worldtravel.plan import Plan, Stay, Stop, parse_plan
from environments.worldtravel.scenario import (
    COST_CATEGORIES,
    ROOM_CAPACITY,
    Constraint,
    Scenario,
)


class Fail(Exception):
    """Raised inside a check to fail it with a reason (caught per constraint)."""


@dataclass
class Leg:
    """Travel between two consecutive stops of a day."""

    day: int
    index: int
    city: str
    origin: int
    target: int
    mode: str
    leave: int
    arrive: int
    minutes: int


class _View:
    """Derived, lazily validated facts about a plan (legs, costs, stay per night)."""

    def __init__(self, world: World, scenario: Scenario, plan: Plan) -> None:
        self.world, self.sc, self.plan = world, scenario, plan

    # ----------------------------------------------------------------- lookups
    def day(self, d: int) -> list[Stop]:
        stops = self.plan.days.get(d)
        if stops is None:
            raise Fail(f"day {d} is missing or unreadable")
        return stops

    def all_days(self) -> list[tuple[int, list[Stop]]]:
        return [(d, self.day(d)) for d in range(1, self.sc.days + 1)]

    def record(self, stop: Stop, cls: type) -> Any:
        rec = self.world.get(stop.id) if stop.id else None
        if not isinstance(rec, cls):
            raise Fail(f"unknown {cls.__name__.lower()} id {stop.id!r}")
        return rec

    def venues(self, d: int) -> list[tuple[Stop, Attraction | Restaurant]]:
        out: list[tuple[Stop, Attraction | Restaurant]] = []
        for stop in self.day(d):
            if stop.kind == "attraction":
                out.append((stop, self.record(stop, Attraction)))
            elif stop.kind == "restaurant":
                out.append((stop, self.record(stop, Restaurant)))
        return out

    def attractions(self) -> list[tuple[int, int, Stop, Attraction]]:
        """(day, position, stop, record) of every attraction visit, in trip order."""
        out = []
        for d, stops in self.all_days():
            for i, stop in enumerate(stops):
                if stop.kind == "attraction":
                    out.append((d, i, stop, self.record(stop, Attraction)))
        return out

    def times(self, stop: Stop, need: str = "both") -> tuple[int, int]:
        if need in ("both", "start") and stop.start is None:
            raise Fail(f"{stop.id}: missing or invalid start time")
        if need in ("both", "end") and stop.end is None:
            raise Fail(f"{stop.id}: missing or invalid end time")
        return (
            stop.start if stop.start is not None else -1,
            stop.end if stop.end is not None else -1,
        )

    def node(self, stop: Stop, side: str) -> tuple[str, int]:
        """(city, matrix node) of a stop; ``side`` is 'in' (arrive) or 'out' (leave)."""
        if stop.kind == "link":
            link = self.record(stop, Link)
            city = self.world.city(link.origin if side == "in" else link.destination)
            return city.id, len(city.nodes) - 1  # the station is the last node
        if stop.kind == "station":
            for city in self.world.cities:
                if city.station == stop.id:
                    return city.id, len(city.nodes) - 1
            raise Fail(f"unknown station {stop.id!r}")
        cls = {"hotel": Hotel, "attraction": Attraction, "restaurant": Restaurant}.get(
            stop.kind or ""
        )
        if cls is None:
            raise Fail(f"unknown stop kind {stop.kind!r}")
        rec = self.record(stop, cls)
        return rec.city, rec.location

    def legs(self, d: int) -> list[Leg]:
        stops = self.day(d)
        out = []
        for i in range(len(stops) - 1):
            a, b = stops[i], stops[i + 1]
            ca, na = self.node(a, "out")
            cb, nb = self.node(b, "in")
            if ca != cb:
                raise Fail(f"day {d}: cannot travel from {a.id} in {ca} to {b.id} in {cb} locally")
            if a.mode is None:
                raise Fail(f"day {d}: stop {i} ({a.id}) has no valid transport_to_next")
            leave = self.times(a, "end")[1]
            arrive = self.times(b, "start")[0]
            minutes = self.world.city(ca).times[a.mode][na][nb]
            out.append(Leg(d, i, ca, na, nb, a.mode, leave, arrive, minutes))
        return out

    def stay_for_night(self, night: int) -> Stay:
        hits = [s for s in self.plan.lodging if night in s.nights]
        if len(hits) != 1:
            raise Fail(f"night {night}: {len(hits)} lodging entries (need exactly 1)")
        return hits[0]

    def hotel(self, stay: Stay) -> Hotel:
        rec = self.world.get(stay.hotel) if stay.hotel else None
        if not isinstance(rec, Hotel):
            raise Fail(f"unknown hotel id {stay.hotel!r}")
        return rec

    # ----------------------------------------------------------------- costs
    def costs(self) -> dict[str, int]:
        party = self.sc.party
        cost = dict.fromkeys(COST_CATEGORIES, 0)
        for night in self.sc.nights():
            stay = self.stay_for_night(night)
            hotel = self.hotel(stay)
            if stay.room not in hotel.prices:
                raise Fail(f"{hotel.id} has no {stay.room!r} room")
            cost["lodging"] += hotel.prices[stay.room][self.world.date_index(self.sc.date(night))]
        for d, stops in self.all_days():
            for stop in stops:
                if stop.kind == "restaurant":
                    cost["food"] += self.record(stop, Restaurant).price * party
                elif stop.kind == "attraction":
                    cost["activities"] += self.record(stop, Attraction).price * party
                elif stop.kind == "link":
                    link = self.record(stop, Link)
                    if stop.fare_class not in link.prices:
                        raise Fail(f"{link.id}: unknown fare class {stop.fare_class!r}")
                    cost["transport"] += link.prices[stop.fare_class] * party
            for leg in self.legs(d):
                city = self.world.city(leg.city)
                if leg.mode == "transit":
                    cost["transport"] += city.transit_fare * party
                elif leg.mode == "taxi":
                    cost["transport"] += city.taxi_fares[leg.origin][leg.target]
        return cost


# --------------------------------------------------------------------- checks per kind
Check = Callable[[_View, dict[str, Any]], str]


def _skeleton(v: _View, p: dict[str, Any]) -> str:
    """the requested stops in order, from the right start to the right end"""
    d = int(p["day"])
    stops, sc = v.day(d), v.sc
    slots = sc.skeleton[d - 1]
    if len(stops) != len(slots) + 2:
        raise Fail(
            f"day {d}: {len(stops)} stops, expected {len(slots) + 2} "
            f"(start, {', '.join(slots)}, end)"
        )
    first, last = stops[0], stops[-1]
    if d == 1:
        station = v.world.city(sc.cities[0]).station
        if first.kind != "station" or first.id != station:
            raise Fail(f"day 1 must start at {station}")
        if v.times(first, "end")[1] < sc.arrival:
            raise Fail(
                f"leaves {station} at {hhmm(first.end or 0)}, before arriving at {hhmm(sc.arrival)}"
            )
    else:
        hotel = v.stay_for_night(d - 1).hotel
        if first.kind != "hotel" or first.id != hotel:
            raise Fail(f"day {d} must start at last night's hotel {hotel}")
        v.times(first, "end")
    if d == sc.days:
        station = v.world.city(sc.cities[-1]).station
        if last.kind != "station" or last.id != station:
            raise Fail(f"day {d} must end at {station}")
        if v.times(last, "start")[0] > sc.departure:
            raise Fail(
                f"reaches {station} at {hhmm(last.start or 0)}, after the "
                f"{hhmm(sc.departure)} departure"
            )
    else:
        hotel = v.stay_for_night(d).hotel
        if last.kind != "hotel" or last.id != hotel:
            raise Fail(f"day {d} must end at tonight's hotel {hotel}")
        v.times(last, "start")
    for j, (slot, stop) in enumerate(zip(slots, stops[1:-1], strict=True)):
        city = sc.slot_city(d, j)
        if slot == "link":
            link = v.record(stop, Link) if stop.kind == "link" else None
            if link is None:
                raise Fail(f"day {d} stop {j + 1}: expected the inter-city link")
            if (link.origin, link.destination) != (sc.cities[0], sc.cities[-1]):
                raise Fail(f"{link.id} does not go {sc.cities[0]} -> {sc.cities[-1]}")
            continue
        want = "attraction" if slot == "attraction" else "restaurant"
        if stop.kind != want or (want == "restaurant" and stop.meal != slot):
            raise Fail(
                f"day {d} stop {j + 1}: expected {slot}, got {stop.kind} {stop.meal or ''}".rstrip()
            )
        rec = v.record(stop, Attraction if want == "attraction" else Restaurant)
        if rec.city != city:
            raise Fail(f"day {d} stop {j + 1}: {rec.id} is not in {city}")
    return f"day {d} has the requested {len(slots)} stops in order"


def _opening_hours(v: _View, p: dict[str, Any]) -> str:
    """every venue open during the visit, every link running that day"""
    d = int(p["day"])
    date = v.sc.date(d)
    for stop, rec in v.venues(d):
        start, end = v.times(stop)
        intervals = open_intervals(rec, date)
        if not intervals:
            raise Fail(f"{rec.id} is closed on {date}")
        if not any(a <= start and end <= b for a, b in intervals):
            opening = ", ".join(f"{hhmm(a)}-{hhmm(b)}" for a, b in intervals)
            raise Fail(f"{rec.id} visited {hhmm(start)}-{hhmm(end)}, open {opening}")
    for stop in v.day(d):
        if stop.kind == "link":
            link = v.record(stop, Link)
            if not link.weekdays[weekday(date)]:
                raise Fail(f"{link.id} does not run on {date}")
    return f"day {d}: every venue open during the visit"


def _travel_time(v: _View, p: dict[str, Any]) -> str:
    """every leg leaves enough travel time"""
    d = int(p["day"])
    for leg in v.legs(d):
        if leg.arrive - leg.leave < leg.minutes:
            raise Fail(
                f"day {d} leg {leg.index}: {leg.minutes} min by {leg.mode} but only "
                f"{leg.arrive - leg.leave} min between {hhmm(leg.leave)} and "
                f"{hhmm(leg.arrive)}"
            )
    return f"day {d}: every leg leaves enough travel time"


def _timed_entry(v: _View, p: dict[str, Any]) -> str:
    """timed entries and seatings respected"""
    d = int(p["day"])
    for stop, rec in v.venues(d):
        slots = rec.timed_entry if isinstance(rec, Attraction) else rec.seatings
        if slots and v.times(stop, "start")[0] not in slots:
            raise Fail(
                f"{rec.id} starts at {hhmm(stop.start or 0)}, not a bookable entry "
                f"({', '.join(hhmm(s) for s in slots[:6])}...)"
            )
    return f"day {d}: timed entries and seatings respected"


def _min_duration(v: _View, p: dict[str, Any]) -> str:
    for d, stops in v.all_days():
        for stop in stops:
            if stop.kind == "link":
                link = v.record(stop, Link)
                if (stop.start, stop.end) != (link.depart, link.arrive):
                    raise Fail(f"{link.id} runs {hhmm(link.depart)}-{hhmm(link.arrive)}")
            elif stop.kind in ("attraction", "restaurant"):
                rec = v.record(stop, Attraction if stop.kind == "attraction" else Restaurant)
                need = rec.visit_minutes if isinstance(rec, Attraction) else rec.meal_minutes
                start, end = v.times(stop)
                if end - start < need:
                    raise Fail(f"day {d}: {rec.id} needs {need} min, got {end - start}")
    return "every visit lasts at least its required duration"


def _lodging(v: _View, p: dict[str, Any]) -> str:
    sc = v.sc
    if not v.plan.lodging_ok:
        raise Fail("lodging section is malformed")
    extra = [n for s in v.plan.lodging for n in s.nights if n not in sc.nights()]
    if extra:
        raise Fail(f"lodging books nights outside the trip: {extra}")
    for city, nights in sc.stays():
        stays = {id(v.stay_for_night(n)) for n in nights}
        stay = v.stay_for_night(nights[0])
        if len(stays) != 1:
            raise Fail(f"one hotel per city: {city} nights {nights} split over bookings")
        hotel = v.hotel(stay)
        if hotel.city != city:
            raise Fail(f"{hotel.id} is not in {city}")
        if stay.room not in hotel.prices:
            raise Fail(f"{hotel.id} has no {stay.room!r} room")
        if ROOM_CAPACITY.get(str(stay.room), 0) < sc.party:
            raise Fail(f"a {stay.room} room does not fit {sc.party} people")
        if len(nights) < hotel.min_nights:
            raise Fail(f"{hotel.id} requires at least {hotel.min_nights} nights")
        arrive = v.times(v.day(nights[0])[-1], "start")[0]
        if arrive < hotel.check_in:
            raise Fail(
                f"arrives at {hotel.id} at {hhmm(arrive)}, check-in from {hhmm(hotel.check_in)}"
            )
        leave = v.times(v.day(nights[-1] + 1)[0], "end")[1]
        if leave > hotel.check_out:
            raise Fail(f"leaves {hotel.id} at {hhmm(leave)}, check-out by {hhmm(hotel.check_out)}")
    return "lodging covers every night; check-in/out, capacity and minimum stays respected"


def _meal_window(v: _View, p: dict[str, Any]) -> str:
    d, meal, lo, hi = int(p["day"]), p["meal"], int(p["from"]), int(p["to"])
    meals = [s for s in v.day(d) if s.kind == "restaurant" and s.meal == meal]
    if not meals:
        raise Fail(f"day {d}: no {meal}")
    for stop in meals:
        start = v.times(stop, "start")[0]
        if not lo <= start <= hi:
            raise Fail(f"day {d}: {meal} at {hhmm(start)}, outside {hhmm(lo)}-{hhmm(hi)}")
    return f"day {d}: {meal} starts in {hhmm(lo)}-{hhmm(hi)}"


def _visit_window(v: _View, p: dict[str, Any]) -> str:
    d, target, lo, hi = int(p["day"]), p["attraction"], int(p["from"]), int(p["to"])
    starts = [v.times(s, "start")[0] for s in v.day(d) if s.kind == "attraction" and s.id == target]
    if not starts:
        raise Fail(f"{target} is not visited on day {d}")
    if not any(lo <= t <= hi for t in starts):
        raise Fail(f"{target} starts at {hhmm(starts[0])}, outside {hhmm(lo)}-{hhmm(hi)}")
    return f"{target} visited on day {d} within {hhmm(lo)}-{hhmm(hi)}"


def _day_bounds(v: _View, p: dict[str, Any]) -> str:
    lo, hi = int(p["leave_after"]), int(p["back_by"])
    for d, stops in v.all_days():
        if stops and stops[0].kind == "hotel" and v.times(stops[0], "end")[1] < lo:
            raise Fail(f"day {d}: leaves the hotel at {hhmm(stops[0].end or 0)}, before {hhmm(lo)}")
        if stops and stops[-1].kind == "hotel" and v.times(stops[-1], "start")[0] > hi:
            raise Fail(f"day {d}: back at {hhmm(stops[-1].start or 0)}, after {hhmm(hi)}")
    return f"out after {hhmm(lo)} and back by {hhmm(hi)} every day"


def _booking_lead(v: _View, p: dict[str, Any]) -> str:
    k = int(p["days_ahead"])
    for d, _, _, rec in v.attractions():
        if rec.booking_lead_days > k + d - 1:
            raise Fail(
                f"{rec.id} must be booked {rec.booking_lead_days} days ahead; day {d} "
                f"is only {k + d - 1} days away"
            )
    return f"every attraction bookable {k} days before the trip"


def _connection_buffer(v: _View, p: dict[str, Any]) -> str:
    b = int(p["minutes"])
    d = int(p["day"])
    stops = v.day(d)
    for leg in v.legs(d):
        if stops[leg.index + 1].kind == "link":
            spare = leg.arrive - leg.leave - leg.minutes
            if spare < b:
                raise Fail(f"at the station {spare} min before departure, need {b}")
            return f"at the station at least {b} min before the departure"
    raise Fail(f"day {d} has no inter-city link")


def _precedence(v: _View, p: dict[str, Any]) -> str:
    a, b = p["first"], p["then"]
    order = [(d, i, s.id) for d, i, s, _ in v.attractions()]
    pa = [(d, i) for d, i, x in order if x == a]
    pb = [(d, i) for d, i, x in order if x == b]
    if not pa or not pb:
        raise Fail(f"{a if not pa else b} is not visited")
    if max(pa) >= min(pb):
        raise Fail(f"{b} is visited before (or with) {a}")
    return f"{a} visited before {b}"


def _either_or(v: _View, p: dict[str, Any]) -> str:
    a, b = p["a"], p["b"]
    ids = {s.id for _, _, s, _ in v.attractions()}
    if (a in ids) == (b in ids):
        raise Fail(f"{'both' if a in ids else 'neither'} of {a} and {b} visited")
    return f"exactly one of {a} and {b} visited"


def _if_then(v: _View, p: dict[str, Any]) -> str:
    d, category, mode = int(p["day"]), p["category"], p["forbid_mode"]
    if not any(rec.category == category for dd, _, _, rec in v.attractions() if dd == d):
        return f"no {category} on day {d}, so the condition does not apply"
    if any(leg.mode == mode for leg in v.legs(d)):
        raise Fail(f"day {d} has a {category} and uses {mode}")
    return f"day {d} has a {category} and no {mode}"


def _count(v: _View, p: dict[str, Any]) -> str:
    category, op, n = p["category"], p["op"], int(p["n"])
    got = sum(rec.category == category for _, _, _, rec in v.attractions())
    ok = got >= n if op == "at_least" else got <= n
    if not ok:
        raise Fail(f"{got} {category} visits, need {op.replace('_', ' ')} {n}")
    return f"{got} {category} visits ({op.replace('_', ' ')} {n})"


def _all_different(v: _View, p: dict[str, Any]) -> str:
    kind = p["target"]
    ids = [s.id for _, stops in v.all_days() for s in stops if s.kind == kind]
    dup = sorted({x for x in ids if ids.count(x) > 1 and x})
    if dup:
        raise Fail(f"repeated {kind}: {', '.join(dup)}")
    return f"no {kind} repeated"


def _exclude(v: _View, p: dict[str, Any]) -> str:
    target = p["id"]
    for d, stops in v.all_days():
        if any(s.id == target for s in stops):
            raise Fail(f"{target} visited on day {d}")
    return f"{target} avoided"


def _budget_total(v: _View, p: dict[str, Any]) -> str:
    total = sum(v.costs().values())
    if total > int(p["amount"]):
        raise Fail(f"total {total} exceeds budget {p['amount']}")
    return f"total {total} within {p['amount']}"


def _budget_category(v: _View, p: dict[str, Any]) -> str:
    spent = v.costs()[p["category"]]
    if spent > int(p["amount"]):
        raise Fail(f"{p['category']} {spent} exceeds {p['amount']}")
    return f"{p['category']} {spent} within {p['amount']}"


def _walk_limit(v: _View, p: dict[str, Any]) -> str:
    limit = int(p["minutes"])
    for d, _ in v.all_days():
        walked = sum(leg.minutes for leg in v.legs(d) if leg.mode == "walk")
        if walked > limit:
            raise Fail(f"day {d}: {walked} min walking, limit {limit}")
    return f"at most {limit} min walking per day"


def _cuisine(v: _View, p: dict[str, Any]) -> str:
    meal, allowed = p["meal"], set(p["cuisines"])
    for d, stops in v.all_days():
        for stop in stops:
            if stop.kind == "restaurant" and stop.meal == meal:
                rec = v.record(stop, Restaurant)
                if rec.cuisine not in allowed:
                    raise Fail(f"day {d} {meal} at {rec.id} is {rec.cuisine}")
    return f"every {meal} is {' or '.join(sorted(allowed))}"


def _room_type(v: _View, p: dict[str, Any]) -> str:
    for night in v.sc.nights():
        stay = v.stay_for_night(night)
        if stay.room != p["room"]:
            raise Fail(f"night {night}: {stay.room} room, need {p['room']}")
    return f"{p['room']} room every night"


def _transport_mode(v: _View, p: dict[str, Any]) -> str:
    if p["scope"] == "local":
        for d, _ in v.all_days():
            if any(leg.mode == p["forbid"] for leg in v.legs(d)):
                raise Fail(f"day {d} uses {p['forbid']}")
        return f"no {p['forbid']} anywhere"
    for _, stops in v.all_days():
        for stop in stops:
            if stop.kind == "link" and v.record(stop, Link).mode != p["require"]:
                raise Fail(f"{stop.id} is not a {p['require']}")
    return f"inter-city travel by {p['require']}"


def _rating_floor(v: _View, p: dict[str, Any]) -> str:
    target, floor = p["target"], float(p["min_rating"])
    recs: list[Any] = []
    if target == "hotel":
        recs = [v.hotel(v.stay_for_night(n)) for n in v.sc.nights()]
    else:
        cls = Attraction if target == "attraction" else Restaurant
        recs = [v.record(s, cls) for _, stops in v.all_days() for s in stops if s.kind == target]
    low = [r.id for r in recs if r.rating < floor]
    if low:
        raise Fail(f"{target} rated below {floor}: {', '.join(sorted(set(low)))}")
    return f"every {target} rated {floor}+"


def _hotel_rules(v: _View, p: dict[str, Any]) -> str:
    for night in v.sc.nights():
        hotel = v.hotel(v.stay_for_night(night))
        for rule, want in p.items():
            if getattr(hotel, rule) != want:
                raise Fail(f"{hotel.id}: {rule} is {getattr(hotel, rule)}, need {want}")
    return "hotel rules met: " + ", ".join(f"{k}={w}" for k, w in p.items())


def _every_day(check: Check) -> Check:
    """A base check per trip: with a ``day`` param that day only (older scenario files),
    else every day of the trip in order, failing with the first day that fails."""

    def run(v: _View, p: dict[str, Any]) -> str:
        if "day" in p:
            return check(v, p)
        for d in range(1, v.sc.days + 1):
            check(v, {**p, "day": d})
        return f"all {v.sc.days} day(s): " + check.__doc__.strip() if check.__doc__ else "ok"

    return run


CHECKS: dict[str, Check] = {
    "skeleton": _every_day(_skeleton),
    "opening_hours": _every_day(_opening_hours),
    "travel_time": _every_day(_travel_time),
    "timed_entry": _every_day(_timed_entry),
    "min_duration": _min_duration,
    "lodging": _lodging,
    "meal_window": _meal_window,
    "visit_window": _visit_window,
    "day_bounds": _day_bounds,
    "booking_lead": _booking_lead,
    "connection_buffer": _connection_buffer,
    "precedence": _precedence,
    "either_or": _either_or,
    "if_then": _if_then,
    "count": _count,
    "all_different": _all_different,
    "exclude": _exclude,
    "budget_total": _budget_total,
    "budget_category": _budget_category,
    "walk_limit": _walk_limit,
    "cuisine": _cuisine,
    "room_type": _room_type,
    "transport_mode": _transport_mode,
    "rating_floor": _rating_floor,
    "hotel_rules": _hotel_rules,
}


def _check_one(view: _View | None, constraint: Constraint) -> dict[str, Any]:
    result = {"id": constraint.id, "kind": constraint.kind, "category": constraint.category}
    if view is None:
        return {**result, "passed": False, "reason": "no parseable itinerary"}
    try:
        reason = CHECKS[constraint.kind](view, constraint.params)
        return {**result, "passed": True, "reason": reason}
    except Fail as exc:
        return {**result, "passed": False, "reason": str(exc)}
    except Exception as exc:  # malformed input we did not foresee: fail, never crash
        return {**result, "passed": False, "reason": f"malformed plan ({type(exc).__name__})"}


EMPTY_REASON = "empty itinerary: it names no known venue, link or hotel, so nothing to check"


def reads_nothing(world: World, plan: Plan) -> bool:
    """Whether a parsed plan names no known attraction, restaurant, link or hotel (in a
    stop or a lodging entry): an empty itinerary.

    Why: on such a plan, constraints that only speak of what is visited (exclusions,
    cuisines, ratings, all-different, walking, forbidden modes...) would pass
    vacuously, and a constant nonsense answer would earn partial credit. A constraint
    with nothing to check fails on an empty itinerary instead.
    """
    for stops in plan.days.values():
        for stop in stops:
            if stop.id and isinstance(
                world.get(stop.id), Attraction | Restaurant | Link | Hotel
            ):
                return False
    return not any(
        stay.hotel and isinstance(world.get(stay.hotel), Hotel) for stay in plan.lodging
    )


def check_plan(world: World, scenario: Scenario, raw: Any) -> dict[str, Any]:
    """Check a submission against every constraint of ``scenario``.

    Returns ``{"scenario", "delivered", "feasible", "passed", "total", "cost",
    "parse_errors", "results": [{"id", "kind", "category", "passed", "reason"}]}``;
    ``cost`` is the plan's total cost when it can be computed, else None. An
    undelivered or empty itinerary (:func:`reads_nothing`) passes no constraint.
    """
    plan = parse_plan(raw)
    view = _View(world, scenario, plan) if plan is not None else None
    results: list[dict[str, Any]]
    if plan is not None and reads_nothing(world, plan):
        results = [
            {"id": c.id, "kind": c.kind, "category": c.category, "passed": False,
             "reason": EMPTY_REASON}
            for c in scenario.constraints
        ]
    else:
        results = [_check_one(view, c) for c in scenario.constraints]
    cost: int | None = None
    if view is not None:
        try:
            cost = sum(view.costs().values())
        except Exception:
            cost = None
    passed = sum(r["passed"] for r in results)
    return {
        "scenario": scenario.id,
        "delivered": plan is not None,
        "feasible": plan is not None and passed == len(results),
        "passed": passed,
        "total": len(results),
        "cost": cost,
        "parse_errors": plan.errors if plan is not None else ["not a JSON itinerary"],
        "results": results,
    }
