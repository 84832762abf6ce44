"""Decisive facts of a plan, and whether the plan used each one correctly (perception).

Why: an infeasible Webscape plan is either a perception failure (the agent misread, or
could not read, a fact about a place it chose) or a planning failure (it read everything
right and still broke a global constraint). A plan's *decisive facts* are the facts its
feasibility depends on through a per-record check: for every venue visit its opening
hours, closures (when the venue has any), bookable start times (when it has any) and
duration; for every leg the travel-map row of its origin; for every departure its running
days and timetable; for every stay the hotel's check-in, check-out and minimum stay; and,
where the scenario has the constraint, the hotel rules, ratings, cuisines and booking
leads it names. Prices are left out: they matter only through budgets, which are global.
For the reference plan these are the scenario's decisive facts (all respected, by
construction). A fact is *used correctly* when every use of it in the plan agrees with the
true world; ``perception`` is that share, overall and per modality (text, layout, image).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from environments.worldtravel.model import Attraction, Hotel, Link, Restaurant, World, weekday
from environments.worldtravel.plan import parse_plan
from environments.worldtravel.scenario import Scenario


def decisive_facts(world: World, scenario: Scenario, raw_plan: Any) -> dict[str, bool] | None:
    """Fact key -> whether the plan used it correctly (None when no itinerary is readable)."""
    plan = parse_plan(raw_plan)
    if plan is None:
        return None
    used: dict[str, bool] = defaultdict(lambda: True)
    kinds = {c.kind: c.params for c in scenario.constraints}

    def use(key: str, ok: bool) -> None:
        used[key] = used[key] and ok

    for day, stops in sorted(plan.days.items()):
        if not 1 <= day <= scenario.days:
            continue
        date = scenario.date(day)
        for i, stop in enumerate(stops):
            rec = world.get(stop.id) if stop.id else None
            if isinstance(rec, Restaurant | Attraction) and stop.start is not None:
                end = stop.end if stop.end is not None else stop.start
                if rec.closures:
                    use(f"{rec.id}.closures", date not in rec.closures)
                if date not in rec.closures:
                    spans = rec.hours[weekday(date)]
                    use(f"{rec.id}.hours", any(a <= stop.start and end <= b for a, b in spans))
                slots = rec.timed_entry if isinstance(rec, Attraction) else rec.seatings
                if slots:
                    slot_key = "timed_entry" if isinstance(rec, Attraction) else "seatings"
                    use(f"{rec.id}.{slot_key}", stop.start in slots)
                need = rec.visit_minutes if isinstance(rec, Attraction) else rec.meal_minutes
                duration_key = "visit_minutes" if isinstance(rec, Attraction) else "meal_minutes"
                use(f"{rec.id}.{duration_key}", end - stop.start >= need)
                floor = kinds.get("rating_floor")
                if floor and floor["target"] == stop.kind:
                    use(f"{rec.id}.rating", rec.rating >= float(floor["min_rating"]))
                if isinstance(rec, Restaurant) and "cuisine" in kinds:
                    if kinds["cuisine"]["meal"] == stop.meal:
                        use(f"{rec.id}.cuisine", rec.cuisine in set(kinds["cuisine"]["cuisines"]))
                if isinstance(rec, Attraction) and "booking_lead" in kinds:
                    lead = int(kinds["booking_lead"]["days_ahead"]) + day - 1
                    use(f"{rec.id}.booking_lead_days", rec.booking_lead_days <= lead)
            if isinstance(rec, Link):
                use(f"{rec.id}.weekdays", rec.weekdays[weekday(date)])
                use(f"{rec.id}.depart", stop.start == rec.depart)
                use(f"{rec.id}.arrive", stop.end == rec.arrive)
            if i + 1 < len(stops):
                _leg(world, stop, stops[i + 1], use)
    _stays(world, scenario, plan, kinds, use)
    return dict(used)


def _node(world: World, stop: Any, side: str) -> tuple[str, str] | None:
    """(city, node id) where a stop is left (``out``) or reached (``in``)."""
    rec = world.get(stop.id) if stop.id else None
    if isinstance(rec, Link):
        city = world.city(rec.origin if side == "in" else rec.destination)
        return city.id, city.station
    if isinstance(rec, Hotel | Restaurant | Attraction):
        return rec.city, rec.id
    for city in world.cities:
        if stop.id == city.station:
            return city.id, city.station
    return None


def _leg(world: World, a: Any, b: Any, use: Any) -> None:
    start, end = _node(world, a, "out"), _node(world, b, "in")
    if start is None or end is None or start[0] != end[0] or a.mode is None:
        return
    if a.end is None or b.start is None:
        return
    city = world.city(start[0])
    i, j = city.nodes.index(start[1]), city.nodes.index(end[1])
    use(f"{city.id}.travel.{start[1]}", b.start - a.end >= city.times[a.mode][i][j])


def _stays(world: World, scenario: Scenario, plan: Any, kinds: dict[str, Any], use: Any) -> None:
    for stay in plan.lodging:
        hotel = world.get(stay.hotel) if stay.hotel else None
        nights = sorted(n for n in stay.nights if 1 <= n < scenario.days)
        if not isinstance(hotel, Hotel) or not nights:
            continue
        use(f"{hotel.id}.min_nights", len(nights) >= hotel.min_nights)
        arrive_day = plan.days.get(nights[0])
        if arrive_day and arrive_day[-1].start is not None:
            use(f"{hotel.id}.check_in", arrive_day[-1].start >= hotel.check_in)
        leave_day = plan.days.get(nights[-1] + 1)
        if leave_day and leave_day[0].end is not None:
            use(f"{hotel.id}.check_out", leave_day[0].end <= hotel.check_out)
        for rule, want in (kinds.get("hotel_rules") or {}).items():
            if rule in ("pets", "smoking"):
                use(f"{hotel.id}.{rule}", getattr(hotel, rule) == want)
        if "rating_floor" in kinds and kinds["rating_floor"]["target"] == "hotel":
            use(f"{hotel.id}.rating", hotel.rating >= float(kinds["rating_floor"]["min_rating"]))


def perception(
    world: World, scenario: Scenario, raw_plan: Any, modality: dict[str, str]
) -> dict[str, Any]:
    """``{"perception", "decisive", "by_modality": {m: share}, "misread": [keys]}``.

    ``modality`` maps fact keys to text/layout/image (the site's inventory); a plan with
    no readable itinerary has perception None.
    """
    facts = decisive_facts(world, scenario, raw_plan)
    if facts is None:
        return {"perception": None, "decisive": 0, "by_modality": {}, "misread": []}
    groups: dict[str, list[bool]] = defaultdict(list)
    for key, ok in facts.items():
        groups[modality.get(key, "text")].append(ok)
    total = len(facts)
    return {
        "perception": sum(facts.values()) / total if total else None,
        "decisive": total,
        "by_modality": {m: sum(v) / len(v) for m, v in sorted(groups.items())},
        "counts": {m: len(v) for m, v in sorted(groups.items())},
        "misread": sorted(k for k, ok in facts.items() if not ok),
    }
