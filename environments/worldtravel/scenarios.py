"""Scenario generator: 150 trip requests whose constraints couple across the trip.

How a scenario is made (why it is feasible and tight at once):
1. A frame: cities (30 scenarios per home city, some continue to a second city), dates,
   party size, arrival/departure times and the shape of each day.
2. The base constraints (shape, opening hours, travel times, timed entries per day;
   durations and lodging per trip) and a *witness* plan solved under them with random
   weights, so witnesses differ from scenario to scenario.
3. Sampled constraints that the witness satisfies but a careless plan does not (windows
   around its visit times, precedences in its order, exclusions of places it skips, ...).
4. Resource limits set just above the cheapest plan under everything else (budgets) or
   below it with a fallback (walking), so they bind; then the final CP-SAT solve gives
   the reference plan and a capped count of distinct plans. A frame the solver finds
   infeasible is discarded and regenerated.
The constraint count cycles over every value from 5 to 30 (mean >= 15). Scenario ``i``
depends only on ``(seed, i)``, so any subset regenerates identically.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from environments.worldtravel.model import (
    CUISINES,
    MODES,
    Attraction,
    Hotel,
    Restaurant,
    World,
    hhmm,
)
from environments.worldtravel.scenario import BASE_DAY_KINDS, Constraint, Scenario
from environments.worldtravel.solver import SolveResult, solve

N_SCENARIOS = 150
MIN_COUNT, MAX_COUNT = 5, 30
PLAN_CAP = 5
MAX_ATTEMPTS = 12

Rng = np.random.Generator
Plan = dict[str, Any]


def target_count(i: int) -> int:
    """Constraint count of scenario ``i``: cycles over 5..30 in a scrambled order."""
    span = MAX_COUNT - MIN_COUNT + 1
    return MIN_COUNT + (i * 11) % span


def days_for(count: int) -> int:
    """Trip length that leaves room for ``count`` constraints (base = 4 per day + 2)."""
    return 1 if count < 10 else 2 if count < 14 else 3 if count < 20 else 4


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


def _frame(world: World, seed: int, i: int, attempt: int, count: int) -> tuple[Scenario, Rng]:
    rng = np.random.default_rng([seed, i, attempt])
    family = world.cities[(i // (N_SCENARIOS // len(world.cities))) % len(world.cities)].id
    days = days_for(count)
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
    base: list[Constraint] = []
    for d in range(1, days + 1):
        for kind in BASE_DAY_KINDS:
            base.append(
                Constraint(f"c{len(base) + 1:02d}", kind, {"day": d}, _text(kind, {"day": d}))
            )
    for kind in ("min_duration",) + (("lodging",) if days > 1 else ()):
        base.append(Constraint(f"c{len(base) + 1:02d}", kind, {}, _text(kind, {})))
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


def _s_precedence(
    w: World, sc: Scenario, plan: Plan, rng: Rng, have: list[Constraint]
) -> dict[str, Any] | None:
    seq = [s["id"] for _, _, s in _visited(plan, "attraction")]
    if len(seq) < 2 or len(set(seq)) != len(seq):
        return None
    a, b = sorted(rng.choice(len(seq), size=2, replace=False))
    if any(
        c.kind == "precedence" and c.params["first"] == seq[a] and c.params["then"] == seq[b]
        for c in have
    ):
        return None
    return {"first": seq[a], "then": seq[b]}


def _s_either_or(
    w: World, sc: Scenario, plan: Plan, rng: Rng, have: list[Constraint]
) -> dict[str, Any] | None:
    seq = [s["id"] for _, _, s in _visited(plan, "attraction")]
    city = w.get(seq[0]).city if seq else sc.cities[0]  # type: ignore[union-attr]
    skipped = [a.id for a in w.attractions if a.city == city and a.id not in seq]
    if not seq or not skipped:
        return None
    return {"a": seq[int(rng.integers(len(seq)))], "b": skipped[int(rng.integers(len(skipped)))]}


def _s_if_then(
    w: World, sc: Scenario, plan: Plan, rng: Rng, have: list[Constraint]
) -> dict[str, Any] | None:
    opts = []
    for day in plan["days"]:
        d = day["day"]
        if any(c.kind == "if_then" and c.params["day"] == d for c in have):
            continue
        used = {s.get("transport_to_next") for s in day["stops"]}
        cats = {w.get(s["id"]).category for s in day["stops"] if s["kind"] == "attraction"}  # type: ignore[union-attr]
        for cat in sorted(cats):
            opts += [(d, cat, m) for m in MODES if m not in used]
    if not opts:
        return None
    d, cat, mode = opts[int(rng.integers(len(opts)))]
    return {"day": d, "category": cat, "forbid_mode": mode}


def _s_count(
    w: World, sc: Scenario, plan: Plan, rng: Rng, have: list[Constraint]
) -> dict[str, Any] | None:
    cats = [w.get(s["id"]).category for _, _, s in _visited(plan, "attraction")]  # type: ignore[union-attr]
    if not cats:
        return None
    cat = cats[int(rng.integers(len(cats)))]
    if any(c.kind == "count" and c.params["category"] == cat for c in have):
        return None
    n = cats.count(cat)
    if rng.random() < 0.5:
        return {"category": cat, "op": "at_least", "n": n}
    other = [
        c for c in ("museum", "park", "landmark", "gallery", "tour", "market") if c not in cats
    ]
    if other:
        return {"category": other[int(rng.integers(len(other)))], "op": "at_most", "n": 0}
    return {"category": cat, "op": "at_most", "n": n}


def _s_all_different(
    w: World, sc: Scenario, plan: Plan, rng: Rng, have: list[Constraint]
) -> dict[str, Any] | None:
    for target in ("restaurant", "attraction")[:: 1 if rng.random() < 0.5 else -1]:
        ids = [s["id"] for _, _, s in _visited(plan, target)]
        if (
            len(ids) > 1
            and len(set(ids)) == len(ids)
            and not any(c.kind == "all_different" and c.params["target"] == target for c in have)
        ):
            return {"target": target}
    return None


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


SAMPLERS: dict[str, tuple[float, Sampler]] = {
    "meal_window": (3.0, _s_meal_window),
    "visit_window": (3.0, _s_visit_window),
    "day_bounds": (1.0, _s_day_bounds),
    "booking_lead": (0.7, _s_booking_lead),
    "connection_buffer": (1.5, _s_connection_buffer),
    "precedence": (2.0, _s_precedence),
    "either_or": (1.5, _s_either_or),
    "if_then": (1.5, _s_if_then),
    "count": (1.5, _s_count),
    "all_different": (1.5, _s_all_different),
    "exclude": (2.0, _s_exclude),
    "cuisine": (1.5, _s_cuisine),
    "room_type": (1.0, _s_room_type),
    "transport_mode": (1.0, _s_transport_mode),
    "rating_floor": (1.5, _s_rating_floor),
    "hotel_rules": (1.0, _s_hotel_rules),
}
RESOURCE_WEIGHTS = {"budget_total": 3.0, "budget_category": 1.5, "walk_limit": 1.5}


# ----------------------------------------------------------------------------- text
def _text(kind: str, p: dict[str, Any]) -> str:
    t = {
        "skeleton": lambda: f"Day {p.get('day')} follows the requested stops in the given order.",
        "opening_hours": lambda: (
            f"Day {p.get('day')}: every place must be open for the whole visit."
        ),
        "travel_time": lambda: f"Day {p.get('day')}: leave enough time to travel between stops.",
        "timed_entry": lambda: (
            f"Day {p.get('day')}: timed-entry sights and reserved seatings start exactly"
            " at a bookable time."
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


def _resources(
    world: World, sc: Scenario, rng: Rng, kinds: list[str]
) -> tuple[Scenario, SolveResult] | None:
    extra: list[Constraint] = []
    if "walk_limit" in kinds:
        cheap = solve(world, sc)
        if not cheap.feasible or cheap.plan is None:
            return None
        walked = _max_walk(world, sc, cheap.plan)
        tight = int(walked * rng.uniform(0.4, 0.85)) // 5 * 5
        p: dict[str, Any] = {"minutes": tight}
        trial = _with(sc, [Constraint("", "walk_limit", p, _text("walk_limit", p))])
        if not solve(world, trial).feasible:
            p = {"minutes": walked}
        extra.append(Constraint("", "walk_limit", p, _text("walk_limit", p)))
    base = _with(sc, extra)
    best = solve(world, base)
    if not best.feasible or best.cost is None:
        return None
    n_cat = kinds.count("budget_category")
    cats = [c for c in ("lodging", "food", "activities", "transport") if best.costs.get(c, 0) > 0]
    for c in list(rng.permutation(cats))[:n_cat]:
        p = {
            "category": str(c),
            "amount": int(math.ceil(best.costs[str(c)] * rng.uniform(1.0, 1.15))),
        }
        extra.append(Constraint("", "budget_category", p, _text("budget_category", p)))
    if "budget_total" in kinds:
        p = {"amount": int(math.ceil(best.cost * rng.uniform(1.0, 1.08)))}
        extra.append(Constraint("", "budget_total", p, _text("budget_total", p)))
    return _with(sc, extra), best


def _max_walk(world: World, sc: Scenario, plan: Plan) -> int:
    from environments.worldtravel.checker import _View  # the checker's own leg walk
    from environments.worldtravel.plan import parse_plan

    parsed = parse_plan(plan)
    assert parsed is not None
    view = _View(world, sc, parsed)
    return max(
        sum(g.minutes for g in view.legs(d) if g.mode == "walk") for d in range(1, sc.days + 1)
    )


def generate_scenario(world: World, seed: int, i: int, plan_cap: int = PLAN_CAP) -> Scenario:
    """Scenario ``i`` of the set for ``seed`` (independent of every other index)."""
    count = target_count(i)
    for attempt in range(MAX_ATTEMPTS):
        sc, rng = _frame(world, seed, i, attempt, count)
        witness = solve(world, sc, objective="random", weights_seed=int(rng.integers(2**31)))
        if not witness.feasible or witness.plan is None:
            continue
        n_extra = count - len(sc.constraints)
        kinds: list[str] = []
        weights = {k: w for k, (w, _) in SAMPLERS.items()} | RESOURCE_WEIGHTS
        while len(kinds) < n_extra:
            kind = _pick(rng, weights)
            kinds.append(kind)
            if (
                kind in ("walk_limit", "budget_total")
                or kinds.count(kind) >= 2
                and kind == "budget_category"
            ):
                weights[kind] = 0.0
        extra: list[Constraint] = []
        for kind in [k for k in kinds if k in SAMPLERS]:
            params = None
            for candidate in [kind] + sorted(SAMPLERS, key=lambda _: rng.random()):
                params = SAMPLERS[candidate][1](world, sc, witness.plan, rng, extra)
                if params is not None and any(
                    c.kind == candidate and c.params == params for c in extra
                ):
                    params = None
                if params is not None:
                    extra.append(Constraint("", candidate, params, _text(candidate, params)))
                    break
            if params is None:
                break
        if len(extra) != len([k for k in kinds if k in SAMPLERS]):
            continue
        sc = _with(sc, extra)
        res_kinds = [k for k in kinds if k not in SAMPLERS]
        done = _resources(world, sc, rng, res_kinds)
        if done is None:
            continue
        sc, _ = done
        if len(sc.constraints) != count:
            continue
        final = solve(world, sc, count_cap=plan_cap)
        if not final.feasible:
            continue
        return Scenario(
            **{
                **sc.__dict__,
                "request": _request(world, sc),
                "reference_plan": final.plan,
                "reference_cost": final.cost,
                "plans_found": final.plans_found,
                "plan_cap": plan_cap,
                "optimal": final.optimal,
                "meta": {"attempt": attempt},
            }
        )
    raise RuntimeError(f"scenario {i}: no feasible frame in {MAX_ATTEMPTS} attempts")
