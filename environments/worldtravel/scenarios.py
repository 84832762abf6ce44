"""Scenario generator: 150 trip requests whose constraints couple across the trip.

How a scenario is made (why it is feasible, coupled and tight at once):
1. A frame: cities (30 scenarios per home city, some continue to a second city), dates,
   party size, arrival/departure times and the shape of each day. Trip length
   (:func:`trip_days`) and constraint count (:func:`target_count`) are drawn
   independently, so every count bucket holds 1- to 4-day trips.
2. The base constraints, *one instance per trip* each (``skeleton``, ``opening_hours``,
   ``travel_time``, ``timed_entry``, ``min_duration``, plus ``lodging`` when the trip has
   a night); each instance checks every day. So a 1-day trip has 5 base constraints and
   a longer one 6, whatever its length, and the count measures requirements, not days.
   A *witness* plan is solved under them with random weights (witnesses differ).
3. Local constraints sampled true of the witness but not of a careless plan (windows
   around its visit times, exclusions of tempting places it skips, cuisines, ratings,
   room and hotel rules, booking lead, connection buffers).
4. Global constraints (:data:`~environments.worldtravel.scenario.GLOBAL_KINDS`, at least
   three per scenario: always a total budget, then precedences, either-ors, counts,
   if-thens, all-different, category budgets) chosen *against the greedy planner*: the
   greedy agent (:func:`~environments.worldtravel.agents.greedy_plan`) sees only local
   constraints, so its plan is fixed once they are; among the global constraints the
   witness satisfies, the sampler prefers those the greedy plan breaks (an either-or
   between its first, tempting pick and a sight it skips; a precedence its order
   reverses; a count its choices miss; an if-then its taxis break).
5. The minimum-cost plan under all of that is the reference plan; the total budget is
   set 0-5% above its cost (category budgets 0-10%, a walking limit at its longest
   day's walk), so the reference meets them and a plan that spends freely early does
   not. A scenario whose greedy plan still passes every constraint is regenerated.
6. ``plans_found`` counts distinct plans by CP-SAT solution enumeration, capped at
   :data:`~environments.worldtravel.solver.COUNT_CAP`, with the reference plan always
   among them (so it is >= 1); ``meta.plans_exact`` says whether the count is exact
   (False: the cap or the work limit stopped it, and the number is a lower bound).
   ``coupling`` is the diagnostic of :func:`~environments.worldtravel.solver.coupling`:
   how many global constraints one day-1 decision can force a plan to break, over the
   candidates whose minimum was proven (``exact`` when all were).
Every solve has a deterministic work limit, so the bytes do not depend on the machine.
The constraint count cycles over 8..30 (1-day trips carry 5 base + at least 3 global
constraints; longer trips need 9). Scenario ``i`` depends only on ``(seed, i)``, so any
subset regenerates identically.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from environments.worldtravel.agents import greedy_plan
from environments.worldtravel.checker import check_plan
from environments.worldtravel.model import (
    CATEGORIES,
    CUISINES,
    MODES,
    Attraction,
    Hotel,
    Restaurant,
    World,
    hhmm,
)
from environments.worldtravel.scenario import BASE_DAY_KINDS, BASE_KINDS, Constraint, Scenario
from environments.worldtravel.solver import COUNT_CAP, count_plans, coupling, solve

N_SCENARIOS = 150
MIN_COUNT, MAX_COUNT = 8, 30
MIN_GLOBAL = 3
PLAN_CAP = COUNT_CAP
MAX_ATTEMPTS = 20
WITNESS_LIMIT = 0.1  # deterministic work units: any feasible, randomly weighted plan
# (a witness needs feasibility, not optimality for its random weights; a frame with no
# witness within the limit is drawn again)
REFERENCE_LIMIT = 1.5

Rng = np.random.Generator
Plan = dict[str, Any]


def trip_days(i: int) -> int:
    """Trip length of scenario ``i``: 1..4 days in turn (independent of the count)."""
    return 1 + i % 4


def n_base(days: int) -> int:
    """Base constraints of a ``days``-day trip: one per base kind, lodging if a night."""
    return len(BASE_KINDS) - (days == 1)


def target_count(i: int) -> int:
    """Constraint count of scenario ``i``: cycles over 8..30 in a scrambled order (23
    values, coprime with the 4 trip lengths, so count and length vary independently),
    raised to the least a trip of :func:`trip_days` can carry (base + 3 global)."""
    span = MAX_COUNT - MIN_COUNT + 1
    count = MIN_COUNT + (i * 11) % span
    return max(count, n_base(trip_days(i)) + MIN_GLOBAL)


# ----------------------------------------------------------------------------- frame
def _skeleton(rng: Rng, days: int, transfer: int | None, departure: int) -> list[list[str]]:
    out = []
    for d in range(1, days + 1):
        if d == transfer:
            options = [
                ["link", "lunch", "attraction", "dinner"],
                ["attraction", "link", "dinner"],
                ["attraction", "lunch", "link", "attraction"],
            ]
            if d == days:
                options = [["attraction", "link", "attraction"], ["lunch", "link", "attraction"]]
        elif d == days:
            options = [["attraction", "lunch", "attraction"], ["attraction", "lunch"]]
            if days == 1 or departure >= 20 * 60:
                options.append(["attraction", "lunch", "attraction", "dinner"])
        elif d == 1:
            options = [
                ["attraction", "lunch", "attraction", "dinner"],
                ["lunch", "attraction", "dinner"],
            ]
        else:
            options = [
                ["attraction", "lunch", "attraction", "dinner"],
                ["attraction", "attraction", "lunch", "attraction", "dinner"],
                ["attraction", "lunch", "attraction"],
            ]
        out.append(list(options[int(rng.integers(len(options)))]))
    return out


def _frame(world: World, seed: int, i: int, attempt: int, days: int) -> tuple[Scenario, Rng]:
    rng = np.random.default_rng([seed, i, attempt])
    family = world.cities[(i // (N_SCENARIOS // len(world.cities))) % len(world.cities)].id
    cities = [family]
    transfer: int | None = None
    if days >= 2 and rng.random() < 0.4:
        others = [c.id for c in world.cities if c.id != family]
        cities.append(others[int(rng.integers(len(others)))])
        transfer = int(rng.integers(2, days + 1))
    start = int(rng.integers(0, world.n_dates - days))
    arrival = int(rng.choice(range(8 * 60, 11 * 60 + 1, 15)))
    departure = int(rng.choice(range(18 * 60, 21 * 60 + 31, 15)))
    skeleton = _skeleton(rng, days, transfer, departure)
    base = [
        Constraint(f"c{k + 1:02d}", kind, {}, _text(kind, {}))
        for k, kind in enumerate(BASE_KINDS[: n_base(days)])
    ]
    sc = Scenario(
        id=f"wt-s{seed}-{i:03d}",
        family=family,
        cities=cities,
        start_date=world.dates()[start],
        days=days,
        party=int(rng.choice([1, 1, 2])),
        arrival=arrival,
        departure=departure,
        transfer_day=transfer,
        skeleton=skeleton,
        constraints=base,
    )
    return sc, rng


# ----------------------------------------------------------------------------- witness facts
def _stops(plan: Plan) -> list[tuple[int, int, dict[str, Any]]]:
    return [(d["day"], j, s) for d in plan["days"] for j, s in enumerate(d["stops"])]


def _visited(plan: Plan, kind: str) -> list[tuple[int, int, dict[str, Any]]]:
    return [x for x in _stops(plan) if x[2]["kind"] == kind]


def _mins(text: str) -> int:
    h, m = text.split(":")
    return int(h) * 60 + int(m)


def _floor30(t: int) -> int:
    return t // 30 * 30


# ----------------------------------------------------------------------------- samplers
Sampler = Callable[[World, Scenario, Plan, Rng, list[Constraint]], dict[str, Any] | None]


def _s_meal_window(
    w: World, sc: Scenario, plan: Plan, rng: Rng, have: list[Constraint]
) -> dict[str, Any] | None:
    meals = [
        (d, s)
        for d, _, s in _visited(plan, "restaurant")
        if not any(
            c.kind == "meal_window" and c.params["day"] == d and c.params["meal"] == s["meal"]
            for c in have
        )
    ]
    if not meals:
        return None
    d, s = meals[int(rng.integers(len(meals)))]
    t = _mins(s["start"])
    lo = _floor30(t - int(rng.integers(0, 60)))
    return {"day": d, "meal": s["meal"], "from": lo, "to": lo + int(rng.choice([60, 90]))}


def _s_visit_window(
    w: World, sc: Scenario, plan: Plan, rng: Rng, have: list[Constraint]
) -> dict[str, Any] | None:
    used = {c.params.get("attraction") for c in have}
    opts = [(d, s) for d, _, s in _visited(plan, "attraction") if s["id"] not in used]
    if not opts:
        return None
    d, s = opts[int(rng.integers(len(opts)))]
    t = _mins(s["start"])
    lo = _floor30(t - int(rng.integers(0, 90)))
    return {"day": d, "attraction": s["id"], "from": lo, "to": lo + int(rng.choice([90, 120]))}


def _s_day_bounds(
    w: World, sc: Scenario, plan: Plan, rng: Rng, have: list[Constraint]
) -> dict[str, Any] | None:
    if sc.days < 2 or any(c.kind == "day_bounds" for c in have):
        return None
    leaves = [_mins(s["end"]) for _, j, s in _stops(plan) if s["kind"] == "hotel" and j == 0]
    backs = [_mins(s["start"]) for _, j, s in _stops(plan) if s["kind"] == "hotel" and j > 0]
    return {"leave_after": _floor30(min(leaves)), "back_by": math.ceil(max(backs) / 30) * 30}


def _s_booking_lead(
    w: World, sc: Scenario, plan: Plan, rng: Rng, have: list[Constraint]
) -> dict[str, Any] | None:
    if any(c.kind == "booking_lead" for c in have):
        return None
    need = [0] + [
        w.get(s["id"]).booking_lead_days - (d - 1)  # type: ignore[union-attr]
        for d, _, s in _visited(plan, "attraction")
    ]
    return {"days_ahead": max(need)}


def _s_connection_buffer(
    w: World, sc: Scenario, plan: Plan, rng: Rng, have: list[Constraint]
) -> dict[str, Any] | None:
    if sc.transfer_day is None or any(c.kind == "connection_buffer" for c in have):
        return None
    stops = plan["days"][sc.transfer_day - 1]["stops"]
    k = next(j for j, s in enumerate(stops) if s["kind"] == "link")
    prev = stops[k - 1]
    city = w.city(sc.cities[0])
    origin = city.nodes.index(prev["id"])
    spare = (
        _mins(stops[k]["start"])
        - _mins(prev["end"])
        - city.times[prev["transport_to_next"]][origin][-1]
    )
    if spare < 10:
        return None
    return {"day": sc.transfer_day, "minutes": min(60, spare // 5 * 5)}


def _s_exclude(
    w: World, sc: Scenario, plan: Plan, rng: Rng, have: list[Constraint]
) -> dict[str, Any] | None:
    used = {s["id"] for _, _, s in _stops(plan)} | {c.params.get("id") for c in have}
    # exclude a popular, nearby, cheap place: the kind a local choice would pick
    venues: list[Attraction | Restaurant] = [*w.attractions, *w.restaurants]
    pool = [v.id for v in venues if v.city in sc.cities and v.id not in used]
    if not pool:
        return None
    scores = [w.get(x).rating - 0.02 * w.get(x).price for x in pool]  # type: ignore[union-attr]
    top = [pool[k] for k in np.argsort(scores)[::-1][:6]]
    return {"id": top[int(rng.integers(len(top)))]}


def _s_cuisine(
    w: World, sc: Scenario, plan: Plan, rng: Rng, have: list[Constraint]
) -> dict[str, Any] | None:
    meals = [s for _, _, s in _visited(plan, "restaurant")]
    if not meals:
        return None
    meal = meals[int(rng.integers(len(meals)))]["meal"]
    if any(c.kind == "cuisine" and c.params["meal"] == meal for c in have):
        return None
    got = sorted({w.get(s["id"]).cuisine for s in meals if s["meal"] == meal})  # type: ignore[union-attr]
    extra = [c for c in CUISINES if c not in got]
    if len(got) < 3 and extra:
        got.append(extra[int(rng.integers(len(extra)))])
    return {"meal": meal, "cuisines": sorted(got)}


def _s_room_type(
    w: World, sc: Scenario, plan: Plan, rng: Rng, have: list[Constraint]
) -> dict[str, Any] | None:
    rooms = {x["room"] for x in plan["lodging"]}
    if len(rooms) != 1 or any(c.kind == "room_type" for c in have):
        return None
    return {"room": rooms.pop()}


def _s_transport_mode(
    w: World, sc: Scenario, plan: Plan, rng: Rng, have: list[Constraint]
) -> dict[str, Any] | None:
    links = [w.get(s["id"]) for _, _, s in _visited(plan, "link")]
    if links and rng.random() < 0.5 and not any(c.params.get("scope") == "intercity" for c in have):
        return {"scope": "intercity", "require": links[0].mode}  # type: ignore[union-attr]
    used = {s.get("transport_to_next") for _, _, s in _stops(plan)}
    free = [
        m
        for m in ("taxi", "transit")
        if m not in used and not any(c.params.get("forbid") == m for c in have)
    ]
    if not free:
        return None
    return {"scope": "local", "forbid": free[0]}


def _s_rating_floor(
    w: World, sc: Scenario, plan: Plan, rng: Rng, have: list[Constraint]
) -> dict[str, Any] | None:
    targets = ["restaurant", "attraction"] + (["hotel"] if plan["lodging"] else [])
    target = targets[int(rng.integers(len(targets)))]
    if any(c.kind == "rating_floor" and c.params["target"] == target for c in have):
        return None
    if target == "hotel":
        ratings = [w.get(x["hotel"]).rating for x in plan["lodging"]]  # type: ignore[union-attr]
    else:
        ratings = [w.get(s["id"]).rating for _, _, s in _visited(plan, target)]  # type: ignore[union-attr]
    if not ratings:
        return None
    return {"target": target, "min_rating": math.floor(min(ratings) * 2) / 2}


def _s_hotel_rules(
    w: World, sc: Scenario, plan: Plan, rng: Rng, have: list[Constraint]
) -> dict[str, Any] | None:
    if not plan["lodging"] or any(c.kind == "hotel_rules" for c in have):
        return None
    hotels: list[Hotel] = [w.get(x["hotel"]) for x in plan["lodging"]]  # type: ignore[misc]
    rules: dict[str, Any] = {}
    if all(h.pets for h in hotels):
        rules["pets"] = True
    if all(not h.smoking for h in hotels) and rng.random() < 0.5:
        rules["smoking"] = False
    if all(h.cancellation == "free" for h in hotels):
        rules["cancellation"] = "free"
    return rules or None


# ----------------------------------------------------------------------------- global samplers
# Each returns the options true of the witness, as (params, breaks the greedy plan,
# spans two days); :func:`_choose` prefers options that break greedy, then cross-day ones.
Option = tuple[dict[str, Any], bool, bool]
GlobalSampler = Callable[[World, Scenario, Plan, Plan, list[Constraint]], list[Option]]


def _sights(plan: Plan) -> list[tuple[int, int, str]]:
    return [(d, j, s["id"]) for d, j, s in _visited(plan, "attraction")]


def _g_precedence(
    w: World, sc: Scenario, wit: Plan, greedy: Plan, have: list[Constraint]
) -> list[Option]:
    seq = _sights(wit)
    ids = [x for _, _, x in seq]
    if len(ids) < 2 or len(set(ids)) != len(ids):
        return []
    g = _sights(greedy)
    out = []
    for a in range(len(seq)):
        for b in range(a + 1, len(seq)):
            p = {"first": ids[a], "then": ids[b]}
            if any(c.kind == "precedence" and c.params == p for c in have):
                continue
            ga = [(d, j) for d, j, x in g if x == ids[a]]
            gb = [(d, j) for d, j, x in g if x == ids[b]]
            breaks = not ga or not gb or max(ga) >= min(gb)
            out.append((p, breaks, seq[a][0] != seq[b][0]))
    return out


def _g_either_or(
    w: World, sc: Scenario, wit: Plan, greedy: Plan, have: list[Constraint]
) -> list[Option]:
    mine = {x for _, _, x in _sights(wit)}
    theirs = {x for _, _, x in _sights(greedy)}
    banned = {c.params.get("id") for c in have if c.kind == "exclude"}
    used = {frozenset((c.params["a"], c.params["b"])) for c in have if c.kind == "either_or"}
    pool = [a.id for a in w.attractions if a.city in sc.cities and a.id not in banned]
    out = []
    for a in sorted(mine):
        for b in pool:
            if b in mine or frozenset((a, b)) in used:
                continue
            # greedy breaks it by visiting both, or neither
            breaks = (a in theirs) == (b in theirs)
            out.append(({"a": a, "b": b}, breaks, False))
    return out


def _g_count(
    w: World, sc: Scenario, wit: Plan, greedy: Plan, have: list[Constraint]
) -> list[Option]:
    def tally(plan: Plan) -> dict[str, int]:
        cats = [w.get(x).category for _, _, x in _sights(plan)]  # type: ignore[union-attr]
        return {c: cats.count(c) for c in CATEGORIES}

    mine, theirs = tally(wit), tally(greedy)
    taken = {c.params["category"] for c in have if c.kind == "count"}
    out: list[Option] = []
    for cat in CATEGORIES:
        if cat in taken:
            continue
        n, g = mine[cat], theirs[cat]
        if n >= 1:
            out.append(({"category": cat, "op": "at_least", "n": n}, g < n, sc.days > 1))
        out.append(({"category": cat, "op": "at_most", "n": n}, g > n, sc.days > 1))
    return out


def _g_if_then(
    w: World, sc: Scenario, wit: Plan, greedy: Plan, have: list[Constraint]
) -> list[Option]:
    def day_facts(plan: Plan, d: int) -> tuple[set[str], set[str]]:
        stops = plan["days"][d - 1]["stops"]
        cats = {w.get(s["id"]).category for s in stops if s["kind"] == "attraction"}  # type: ignore[union-attr]
        return cats, {s.get("transport_to_next") for s in stops}

    out: list[Option] = []
    for d in range(1, sc.days + 1):
        if any(c.kind == "if_then" and c.params["day"] == d for c in have):
            continue
        cats, modes = day_facts(wit, d)
        g_cats, g_modes = day_facts(greedy, d)
        for cat in sorted(cats):
            for mode in MODES:
                if mode not in modes:
                    p = {"day": d, "category": cat, "forbid_mode": mode}
                    out.append((p, cat in g_cats and mode in g_modes, False))
    return out


def _g_all_different(
    w: World, sc: Scenario, wit: Plan, greedy: Plan, have: list[Constraint]
) -> list[Option]:
    out: list[Option] = []
    for target in ("restaurant", "attraction"):
        ids = [s["id"] for _, _, s in _visited(wit, target)]
        if (
            len(ids) > 1
            and len(set(ids)) == len(ids)
            and not any(c.kind == "all_different" and c.params["target"] == target for c in have)
        ):
            g = [s["id"] for _, _, s in _visited(greedy, target)]
            out.append(({"target": target}, len(set(g)) != len(g), sc.days > 1))
    return out


GLOBAL_SAMPLERS: dict[str, tuple[float, GlobalSampler]] = {
    "precedence": (2.0, _g_precedence),
    "either_or": (2.0, _g_either_or),
    "count": (1.5, _g_count),
    "if_then": (1.5, _g_if_then),
    "all_different": (0.7, _g_all_different),
}
POST_GLOBAL_WEIGHTS = {"budget_category": 1.0}  # set from the reference plan's costs


def _choose(rng: Rng, options: list[Option]) -> tuple[dict[str, Any], bool] | None:
    """An option breaking the greedy plan if any (cross-day first), else any option."""
    if not options:
        return None
    for pool in (
        [o for o in options if o[1] and o[2]],
        [o for o in options if o[1]],
        options,
    ):
        if pool:
            params, breaks, _ = pool[int(rng.integers(len(pool)))]
            return params, breaks
    return None


SAMPLERS: dict[str, tuple[float, Sampler]] = {
    "meal_window": (3.0, _s_meal_window),
    "visit_window": (3.0, _s_visit_window),
    "day_bounds": (1.0, _s_day_bounds),
    "booking_lead": (0.7, _s_booking_lead),
    "connection_buffer": (1.5, _s_connection_buffer),
    "exclude": (2.0, _s_exclude),
    "cuisine": (1.5, _s_cuisine),
    "room_type": (1.0, _s_room_type),
    "transport_mode": (1.0, _s_transport_mode),
    "rating_floor": (1.5, _s_rating_floor),
    "hotel_rules": (1.0, _s_hotel_rules),
}
POST_LOCAL_WEIGHTS = {"walk_limit": 1.5}  # set from the reference plan's walking


# ----------------------------------------------------------------------------- text
def _text(kind: str, p: dict[str, Any]) -> str:
    t = {
        "skeleton": lambda: "Every day follows the requested stops in the given order.",
        "opening_hours": lambda: "Every place must be open for the whole visit, every day.",
        "travel_time": lambda: "Leave enough time to travel between consecutive stops.",
        "timed_entry": lambda: (
            "Timed-entry sights and reserved seatings start exactly at a bookable time."
        ),
        "min_duration": lambda: (
            "Each visit lasts at least its listed duration; links keep their timetable."
        ),
        "lodging": lambda: (
            "One hotel per city with a room for the whole party; respect check-in/check-out"
            " times and minimum stays."
        ),
        "meal_window": lambda: (
            f"Day {p.get('day')}: {p.get('meal')} starts between {hhmm(p.get('from', 0))}"
            f" and {hhmm(p.get('to', 0))}."
        ),
        "visit_window": lambda: (
            f"Visit {p.get('attraction')} on day {p.get('day')}, entering between"
            f" {hhmm(p.get('from', 0))} and {hhmm(p.get('to', 0))}."
        ),
        "day_bounds": lambda: (
            f"Never leave the hotel before {hhmm(p.get('leave_after', 0))};"
            f" be back by {hhmm(p.get('back_by', 0))}."
        ),
        "booking_lead": lambda: (
            f"We book {p.get('days_ahead')} days before the trip: only sights bookable by then."
        ),
        "connection_buffer": lambda: (
            f"Day {p.get('day')}: be at the station at least {p.get('minutes')} minutes"
            " before the departure."
        ),
        "precedence": lambda: f"Visit {p.get('first')} before {p.get('then')}.",
        "either_or": lambda: f"Visit exactly one of {p.get('a')} and {p.get('b')}.",
        "if_then": lambda: (
            f"If day {p.get('day')} includes a {p.get('category')},"
            f" use no {p.get('forbid_mode')} that day."
        ),
        "count": lambda: (
            f"Visit {str(p.get('op', '')).replace('_', ' ')} {p.get('n')}"
            f" {p.get('category')} sight(s) in total."
        ),
        "all_different": lambda: f"Never visit the same {p.get('target')} twice.",
        "exclude": lambda: f"Do not go to {p.get('id')}.",
        "budget_total": lambda: f"Total cost at most {p.get('amount')}.",
        "budget_category": lambda: f"Spend at most {p.get('amount')} on {p.get('category')}.",
        "walk_limit": lambda: f"At most {p.get('minutes')} minutes of walking per day.",
        "cuisine": lambda: (
            f"Every {p.get('meal')} must be {' or '.join(p.get('cuisines', []))} food."
        ),
        "room_type": lambda: f"Book a {p.get('room')} room.",
        "transport_mode": lambda: (
            f"No {p.get('forbid')} rides."
            if p.get("scope") == "local"
            else f"Travel between cities by {p.get('require')}."
        ),
        "rating_floor": lambda: (
            f"Every {p.get('target')} must be rated {p.get('min_rating')} or higher."
        ),
        "hotel_rules": lambda: (
            "The hotel must have: "
            + ", ".join(
                {
                    "pets": "pets allowed" if p.get("pets") else "no pets",
                    "smoking": "smoking rooms" if p.get("smoking") else "non-smoking",
                    "cancellation": "free cancellation",
                }[k]
                for k in p
            )
            + "."
        ),
    }
    return t[kind]()


def _request(world: World, sc: Scenario) -> str:
    names = [world.city(c).name for c in sc.cities]
    who = "I" if sc.party == 1 else f"We ({sc.party} people)"
    lines = [
        f"{who} arrive at {names[0]} station ({sc.cities[0]}-ST) at {hhmm(sc.arrival)} on "
        f"{sc.start_date} for a {sc.days}-day trip"
        + (f", moving on to {names[1]} on day {sc.transfer_day}" if sc.transfer_day else "")
        + f", and leave from {names[-1]} station ({sc.cities[-1]}-ST) at {hhmm(sc.departure)} "
        f"on day {sc.days}.",
        "Plan each day with exactly these stops, in this order:",
    ]
    for d, slots in enumerate(sc.skeleton, start=1):
        lines.append(
            f"- Day {d} ({sc.date(d)}): "
            + ", ".join(
                "the train/flight/bus to the next city" if s == "link" else s for s in slots
            )
            + "."
        )
    lines.append("Requirements:")
    lines += [
        "- Every day follows the stops listed above, in order: it starts where you wake up "
        "(day 1: the arrival station) and ends at your hotel (last day: the departure "
        "station).",
        "- Every place must be open for the whole visit (weekday hours, closure dates).",
        "- Leave enough time to travel between consecutive stops by the mode you choose.",
        "- Sights with timed entry and restaurants with fixed seatings start exactly at one "
        "of their bookable times.",
    ]
    for c in sc.constraints:
        if c.kind not in BASE_DAY_KINDS:
            lines.append(f"- {c.text}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- assembly
def _with(sc: Scenario, extra: list[Constraint]) -> Scenario:
    cons = [
        Constraint(f"c{k + 1:02d}", c.kind, c.params, c.text)
        for k, c in enumerate(list(sc.constraints) + extra)
    ]
    return Scenario(**{**sc.__dict__, "constraints": cons})


def _pick(rng: Rng, weights: dict[str, float]) -> str:
    kinds = sorted(weights)
    p = np.array([weights[k] for k in kinds])
    return kinds[int(rng.choice(len(kinds), p=p / p.sum()))]


def _max_walk(world: World, sc: Scenario, plan: Plan) -> int:
    from environments.worldtravel.checker import _View  # the checker's own leg walk
    from environments.worldtravel.plan import parse_plan

    parsed = parse_plan(plan)
    assert parsed is not None
    view = _View(world, sc, parsed)
    return max(
        sum(g.minutes for g in view.legs(d) if g.mode == "walk") for d in range(1, sc.days + 1)
    )


def _sample_local(
    world: World, sc: Scenario, witness: Plan, rng: Rng, kinds: list[str]
) -> list[Constraint] | None:
    """Local constraints of ``kinds`` true of the witness (another local kind stands in
    when one has no instance left); None when the witness offers too few."""
    extra: list[Constraint] = []
    for kind in kinds:
        params = None
        for candidate in [kind] + sorted(SAMPLERS, key=lambda _: rng.random()):
            params = SAMPLERS[candidate][1](world, sc, witness, rng, extra)
            if params is not None and any(
                c.kind == candidate and c.params == params for c in extra
            ):
                params = None
            if params is not None:
                extra.append(Constraint("", candidate, params, _text(candidate, params)))
                break
        if params is None:
            return None
    return extra


def _sample_global(
    world: World, sc: Scenario, witness: Plan, greedy: Plan, rng: Rng, kinds: list[str]
) -> tuple[list[Constraint], int] | None:
    """Global constraints of ``kinds`` true of the witness, each chosen to break the
    greedy plan where it can; returns them and how many break it."""
    extra: list[Constraint] = []
    breaking = 0
    for kind in kinds:
        picked = None
        for candidate in [kind] + sorted(GLOBAL_SAMPLERS, key=lambda _: rng.random()):
            picked = _choose(rng, GLOBAL_SAMPLERS[candidate][1](world, sc, witness, greedy, extra))
            if picked is not None:
                params, breaks = picked
                extra.append(Constraint("", candidate, params, _text(candidate, params)))
                breaking += breaks
                break
        if picked is None:
            return None
    return extra, breaking


def _kinds(rng: Rng, n: int, weights: dict[str, float], once: set[str]) -> list[str]:
    """``n`` kinds drawn by weight; kinds in ``once`` at most once (at most twice for
    ``budget_category``)."""
    weights = dict(weights)
    out: list[str] = []
    while len(out) < n and any(weights.values()):
        kind = _pick(rng, weights)
        out.append(kind)
        if kind in once or (kind == "budget_category" and out.count(kind) >= 2):
            weights[kind] = 0.0
    return out


def _post(
    world: World, sc: Scenario, rng: Rng, plan: Plan, costs: dict[str, int], kinds: list[str]
) -> list[Constraint]:
    """Resource limits that the reference plan meets with little to spare."""
    out: list[Constraint] = []
    p: dict[str, Any]
    if "walk_limit" in kinds:
        p = {"minutes": int(math.ceil(_max_walk(world, sc, plan) / 5) * 5)}
        out.append(Constraint("", "walk_limit", p, _text("walk_limit", p)))
    cats = [c for c in ("lodging", "food", "activities", "transport") if costs.get(c, 0) > 0]
    for c in list(rng.permutation(cats))[: kinds.count("budget_category")]:
        p = {"category": str(c), "amount": int(math.ceil(costs[str(c)] * rng.uniform(1.0, 1.1)))}
        out.append(Constraint("", "budget_category", p, _text("budget_category", p)))
    total = sum(costs.values())
    p = {"amount": int(math.ceil(total * rng.uniform(1.0, 1.05)))}
    out.append(Constraint("", "budget_total", p, _text("budget_total", p)))
    return out


def generate_scenario(world: World, seed: int, i: int, plan_cap: int = PLAN_CAP) -> Scenario:
    """Scenario ``i`` of the set for ``seed`` (independent of every other index)."""
    days, count = trip_days(i), target_count(i)
    for attempt in range(MAX_ATTEMPTS):
        sc, rng = _frame(world, seed, i, attempt, days)
        witness = solve(
            world, sc, objective="random", weights_seed=int(rng.integers(2**31)),
            limit=WITNESS_LIMIT,
        )
        if not witness.feasible or witness.plan is None:
            continue
        room = count - len(sc.constraints) - MIN_GLOBAL
        n_global = MIN_GLOBAL + int(room * rng.uniform(0.25, 0.6))
        n_local = count - len(sc.constraints) - n_global
        local_weights = {k: w for k, (w, _) in SAMPLERS.items()} | POST_LOCAL_WEIGHTS
        local_kinds = _kinds(rng, n_local, local_weights, {"walk_limit"})
        global_weights = {k: w for k, (w, _) in GLOBAL_SAMPLERS.items()} | POST_GLOBAL_WEIGHTS
        global_kinds = _kinds(rng, n_global - 1, global_weights, set())  # + the total budget
        local = _sample_local(
            world, sc, witness.plan, rng, [k for k in local_kinds if k in SAMPLERS]
        )
        if local is None:
            continue
        sc = _with(sc, local)
        greedy = greedy_plan(world, sc)  # greedy sees only local constraints: fixed now
        sampled = _sample_global(
            world, sc, witness.plan, greedy, rng, [k for k in global_kinds if k in GLOBAL_SAMPLERS]
        )
        if sampled is None:
            continue
        sc = _with(sc, sampled[0])
        best = solve(world, sc, limit=REFERENCE_LIMIT, hint=witness.plan)
        if not best.feasible or best.plan is None:
            continue
        post_kinds = [k for k in local_kinds + global_kinds if k not in SAMPLERS]
        post_kinds = [k for k in post_kinds if k not in GLOBAL_SAMPLERS]
        sc = _with(sc, _post(world, sc, rng, best.plan, best.costs, post_kinds))
        if len(sc.constraints) != count or sc.n_global < MIN_GLOBAL:
            continue
        if not check_plan(world, sc, best.plan)["feasible"]:
            continue  # never expected: the solver and the checker disagree
        greedy_report = check_plan(world, sc, greedy)
        if greedy_report["feasible"]:
            continue  # local choices suffice: not coupled enough, draw again
        counted = count_plans(world, sc, cap=plan_cap, known=(best.plan,))
        return Scenario(
            **{
                **sc.__dict__,
                "request": _request(world, sc),
                "reference_plan": best.plan,
                "reference_cost": best.cost,
                "plans_found": counted.plans,
                "plan_cap": plan_cap,
                "optimal": best.optimal,
                "coupling": coupling(world, sc, hint=best.plan),
                "meta": {
                    "attempt": attempt,
                    "plans_exact": counted.exact,
                    "greedy_fails": sorted(
                        r["kind"] for r in greedy_report["results"] if not r["passed"]
                    ),
                },
            }
        )
    raise RuntimeError(f"scenario {i}: no feasible frame in {MAX_ATTEMPTS} attempts")
