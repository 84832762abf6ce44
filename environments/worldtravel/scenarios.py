"""Scenario generator: 150 trip requests that defeat a family of shortcut planners.

How a scenario is made (why it is feasible, coupled and tight at once):
1. A frame: cities (30 scenarios per home city, some continue to a second city), dates,
   party size, arrival/departure times and the shape of each day. Trip length
   (:func:`trip_days`) and constraint count (:func:`target_count`) are drawn
   independently, so every count bucket holds 1- to 4-day trips.
2. The base constraints, *one instance per trip* each (``skeleton``, ``opening_hours``,
   ``travel_time``, ``timed_entry``, ``min_duration``, plus ``lodging`` when the trip has
   a night). A *witness* plan is solved under them with random weights.
3. Local constraints sampled true of the witness (windows around its visit times, never
   on day 1's first sight; exclusions of tempting places it skips; cuisines, ratings,
   room and hotel rules, booking lead, connection buffers; a walking limit at its
   longest day's walk). The local problem is now final.
4. The *decoys*: the plans of the family members that ignore the global constraints
   (:data:`~environments.worldtravel.planners.GLOBAL_BLIND`: greedy and the exact
   local shortcuts for cost, travel time and slack) are computed once, here.
5. Global constraints (:data:`~environments.worldtravel.scenario.GLOBAL_KINDS`, at least
   three), by construction: first a *dooming first-day decision* (:func:`_doom`): a
   precedence ``W -> X`` where ``X`` is a shortcut decoy's day-1 first sight (a live
   choice, preferring one the cheapest plan never visits) and ``W`` the witness's,
   with the witness solved again to visit ``X`` later; a plan that opens with ``X``
   can never satisfy it. Then each further global constraint is an option true of the
   witness that breaks the decoys still unbroken, names no venue a decoy visits (an
   *obligation* that a planner avoiding only visible violations never sees) and no
   venue an earlier global constraint names (so one visit cannot settle several).
6. The minimum-cost plan under all of that is the reference plan. Budgets are set
   against the cheapest plan that ignores the global constraints: category budgets go
   first to categories where that plan spends more than the reference (0-2% above the
   reference's spend, below the shortcut's), the total 0-3% above the reference.
7. Verification, the last resort: every family member
   (:data:`~environments.worldtravel.planners.PLANNERS`) plans the draw; if any plan
   passes, the frame is drawn again. Every redraw is counted by reason in
   ``meta.redraws`` and each fully built draw's passing members in
   ``meta.family_draws`` (the construction's own pass rates, before redraws).
8. ``plans_found`` counts distinct plans by CP-SAT solution enumeration, capped at
   :data:`~environments.worldtravel.solver.COUNT_CAP`, with the reference plan always
   among them (so it is >= 1); ``meta.plans_exact`` says whether the count is exact.
   ``coupling`` is the diagnostic of :func:`~environments.worldtravel.solver.coupling`:
   how many global constraints a day-1 first-sight decision can force a plan to break.
Every solve has a deterministic work limit, so the bytes do not depend on the machine.
``construction=BINDING_KINDS`` (:data:`BINDING_KINDS`, experimental, not the shipped
set) makes every global constraint after the first three an either-or;
``construction=BINDING_OBLIGATIONS`` (:data:`BINDING_OBLIGATIONS`, experimental) anchors
those either-ors on a witness sight every decoy skips.
The constraint count cycles over 8..30 (1-day trips carry 5 base + at least 3 global
constraints; longer trips need 9). Scenario ``i`` depends only on ``(seed, i)``, so any
subset regenerates identically.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

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
    open_intervals,
)
from environments.worldtravel.scenario import (
    BASE_DAY_KINDS,
    BASE_KINDS,
    COST_CATEGORIES,
    Constraint,
    Scenario,
)
from environments.worldtravel.solver import COUNT_CAP, count_plans, coupling, solve

N_SCENARIOS = 150
MIN_COUNT, MAX_COUNT = 8, 30
MIN_GLOBAL = 3
PLAN_CAP = COUNT_CAP
MAX_ATTEMPTS = 20
WITNESS_LIMIT = 0.1  # deterministic work units: any feasible, randomly weighted plan
# (a witness needs feasibility, not optimality for its random weights; a frame with no
# witness within the limit is drawn again)
REFERENCE_LIMIT = 0.5

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
    # never day 1's first sight: pinning it would leave the first decision no choice
    # (the dooming first-day decision needs live alternatives)
    first = _first_sight(plan)
    opts = [
        (d, s)
        for d, _, s in _visited(plan, "attraction")
        if s["id"] not in used and not (d == 1 and s["id"] == first)
    ]
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


Scored = tuple[dict[str, Any], frozenset[str], bool]
"""A global option: params, the decoys it breaks (by name), spans two days."""


def _score(
    sampler: GlobalSampler,
    w: World,
    sc: Scenario,
    wit: Plan,
    decoys: dict[str, Plan],
    have: list[Constraint],
) -> list[Scored]:
    """A sampler's options with the set of decoy plans each one breaks (the sampler is
    run once per decoy; its options do not depend on the decoy, only its verdicts)."""
    runs = {name: sampler(w, sc, wit, plan, have) for name, plan in decoys.items()}
    first = next(iter(runs.values()), [])
    return [
        (params, frozenset(n for n, opts in runs.items() if opts[k][1]), cross)
        for k, (params, _, cross) in enumerate(first)
    ]


def _venues(params: dict[str, Any]) -> set[str]:
    """The venue ids a global constraint's params name."""
    return {str(params[k]) for k in ("first", "then", "a", "b") if k in params}


def _choose(
    rng: Rng,
    options: list[Scored],
    unbroken: set[str],
    used: frozenset[str] = frozenset(),
    tempting: frozenset[str] = frozenset(),
) -> tuple[dict[str, Any], frozenset[str]] | None:
    """The option breaking the most still-unbroken decoys, then naming the fewest venues
    that earlier global constraints name (so one visit cannot settle several of them),
    then the fewest ``tempting`` ones (visited by a decoy: a planner that sees a
    precedence's cheap ``then`` is drawn to its ``first``), then breaking the most
    decoys, then a cross-day one; ties drawn at random."""
    if not options:
        return None

    def key(o: Scored) -> tuple[int, int, int, int, int]:
        names = _venues(o[0])
        return (len(o[1] & unbroken), -len(names & used), -len(names & tempting),
                len(o[1]), int(o[2]))

    best = max(key(o) for o in options)
    pool = [o for o in options if key(o) == best]
    params, broken, _ = pool[int(rng.integers(len(pool)))]
    return params, broken


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


def _first_sight_ok(world: World, sc: Scenario, rec: Attraction) -> bool:
    """Whether ``rec`` is a candidate for day 1's first attraction (the coupling
    diagnostic's decision): in the first city, open that day, passing the local filters."""
    if rec.city != sc.cities[0] or not open_intervals(rec, sc.date(1)):
        return False
    for c in sc.constraints:
        p = c.params
        if c.kind == "exclude" and p["id"] == rec.id:
            return False
        if c.kind == "rating_floor" and p["target"] == "attraction" and (
            rec.rating < float(p["min_rating"])
        ):
            return False
        if c.kind == "booking_lead" and rec.booking_lead_days > int(p["days_ahead"]):
            return False
    return True


def _first_sight(plan: Plan) -> str | None:
    """The id of day 1's first attraction in ``plan`` (None when day 1 has none)."""
    return next((s["id"] for s in plan["days"][0]["stops"] if s["kind"] == "attraction"), None)


SHORTCUT_DECOYS: tuple[str, ...] = ("shortcut-slack", "shortcut-time", "shortcut-cost")
"""Decoys that satisfy every local constraint exactly, so their day-1 first attraction
is a live choice (some plan under the local constraints starts with it). The cost
decoy's pick comes last: a cost-minimising planner that sees the precedence would be
drawn to its ``first`` by its ``then`` being cheap."""


def _doom(
    world: World, sc: Scenario, witness: Plan, decoys: dict[str, Plan], weights_seed: int
) -> tuple[Constraint, Plan] | None:
    """A dooming first-day decision, by construction: ``precedence(W, X)`` where ``X``
    is a shortcut decoy's day-1 first attraction (a live choice) and ``W`` the
    witness's. Taken first, ``X`` can have nothing before it, so every plan starting
    with it breaks the precedence. The witness is solved again with the precedence
    added (it must visit ``W`` and later ``X``); returns the constraint and that
    witness, or None when no decoy's pick differs from ``W`` or no witness exists."""
    first = _first_sight(witness)
    if first is None:
        return None
    picks = [_first_sight(decoys[n]) for n in SHORTCUT_DECOYS if n in decoys]
    cost_plan = decoys.get("shortcut-cost")
    cheap = {x for _, _, x in _sights(cost_plan)} if cost_plan is not None else set()
    # picks the cheapest plan never visits first: a cost-minimising planner that sees the
    # precedence is then not drawn to its ``first`` by a cheap ``then``
    ordered = sorted(dict.fromkeys(p for p in picks if p is not None and p != first),
                     key=lambda x: x in cheap)
    for x in ordered:
        p = {"first": first, "then": x}
        doom = Constraint("", "precedence", p, _text("precedence", p))
        again = solve(
            world, _with(sc, [doom]), objective="random", weights_seed=weights_seed,
            limit=WITNESS_LIMIT, hint=witness,
        )
        if again.feasible and again.plan is not None:
            return doom, again.plan
    return None


def _anchored_either_or(
    world: World,
    sc: Scenario,
    witness: Plan,
    decoys: dict[str, Plan],
    rng: Rng,
    have: list[Constraint],
) -> dict[str, Any] | None:
    """An either-or obligation that binds every planner which does not visit one sight,
    whatever the trip's length: ``a`` is a sight the witness visits and no decoy does
    (the *anchor*; an anchor of an earlier either-or is reused first), ``b`` a sight in
    the trip's cities that neither the witness nor any decoy visits and no earlier
    global constraint names. The witness satisfies it (it visits ``a`` only); every
    decoy breaks it (it visits neither). Why (issue 47 item 4): in the default
    construction the global constraints added beyond the first few bind about half the
    time, so the share a planner passes does not fall with the constraint count; an
    anchored either-or binds every planner that skips the anchor, and one anchor serves
    any number of them, so the binding constraints grow with the count on a trip of any
    length. None when the witness visits no sight that the decoys all skip."""
    tempting = {x for plan in decoys.values() for _, _, x in _sights(plan)}
    mine = [x for _, _, x in _sights(witness)]
    anchors = [x for x in dict.fromkeys(mine) if x not in tempting]
    if not anchors:
        return None
    earlier = [c.params["a"] for c in have if c.kind == "either_or" and c.params["a"] in anchors]
    a = earlier[0] if earlier else anchors[int(rng.integers(len(anchors)))]
    named = {v for c in have for v in _venues(c.params)}
    banned = {c.params.get("id") for c in have if c.kind == "exclude"}
    pool = [
        r.id for r in world.attractions
        if r.city in sc.cities and r.id not in banned and r.id not in mine
        and r.id not in tempting and r.id not in named
    ]
    if not pool:
        return None
    return {"a": a, "b": pool[int(rng.integers(len(pool)))]}


def _sample_global(
    world: World,
    sc: Scenario,
    witness: Plan,
    decoys: dict[str, Plan],
    rng: Rng,
    kinds: list[str],
    doom: Constraint | None,
    anchored: bool = False,
) -> tuple[list[Constraint], set[str]] | None:
    """Global constraints true of the witness: the dooming one (when given) in place
    of the first of ``kinds``, then one of each other kind (another global kind
    stands in when one has no option), each chosen to break the decoy plans still
    unbroken. Returns them and the decoys that none of them breaks. ``anchored`` (the
    :data:`BINDING_OBLIGATIONS` construction): an ``either_or`` is first tried as
    :func:`_anchored_either_or`."""
    unbroken = set(decoys)
    tempting = frozenset(x for plan in decoys.values() for _, _, x in _sights(plan))
    extra: list[Constraint] = []
    if doom is not None:
        extra.append(doom)
        unbroken -= {n for n, plan in decoys.items() if _breaks(world, sc, doom, plan)}
        kinds = kinds[1:]
    for kind in kinds:
        picked = None
        order = [kind] + sorted(GLOBAL_SAMPLERS, key=lambda _: rng.random())
        if anchored and kind == "either_or":
            params = _anchored_either_or(world, sc, witness, decoys, rng, extra)
            if params is not None:
                made = Constraint("", "either_or", params, _text("either_or", params))
                extra.append(made)
                unbroken -= {n for n, plan in decoys.items() if _breaks(world, sc, made, plan)}
                continue
        # an obligation naming no tempting venue is invisible to a planner that only
        # avoids what it sees breaking: any kind with one first, tempting ones last
        for strict in (True, False):
            for candidate in order:
                sampler = GLOBAL_SAMPLERS[candidate][1]
                options = [
                    o for o in _score(sampler, world, sc, witness, decoys, extra)
                    if not any(c.kind == candidate and c.params == o[0] for c in extra)
                    and not (strict and _venues(o[0]) & tempting)
                ]
                used = frozenset(v for c in extra for v in _venues(c.params))
                picked = _choose(rng, options, unbroken, used, tempting)
                if picked is not None:
                    extra.append(Constraint("", candidate, picked[0], _text(candidate, picked[0])))
                    unbroken -= picked[1]
                    break
            if picked is not None:
                break
        if picked is None:
            return None
    return extra, unbroken


def _breaks(world: World, sc: Scenario, constraint: Constraint, plan: Plan) -> bool:
    """Whether ``plan`` breaks ``constraint`` (the checker on that one constraint)."""
    probe = Scenario(**{**sc.__dict__, "constraints": [constraint]})
    return not check_plan(world, probe, plan)["feasible"]


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


def _walk_limit(world: World, sc: Scenario, witness: Plan) -> Constraint:
    """A walking limit at the witness's longest day's walk (rounded up to 5 minutes):
    set before the global constraints, so the local problem is final when the decoys
    are planned."""
    p = {"minutes": int(math.ceil(_max_walk(world, sc, witness) / 5) * 5)}
    return Constraint("", "walk_limit", p, _text("walk_limit", p))


def _budgets(
    rng: Rng, costs: dict[str, int], shortcut: dict[str, int] | None, n_category: int
) -> list[Constraint]:
    """Budgets the reference plan (``costs`` per category) meets with little to spare,
    set against the cheapest plan that ignores the global constraints (``shortcut``, its
    costs): category budgets go first to categories where that plan spends more than the
    reference, so it overshoots them; the total is 0-3% above the reference."""
    out: list[Constraint] = []
    p: dict[str, Any]
    cats = [c for c in COST_CATEGORIES if costs.get(c, 0) > 0]
    over = [c for c in cats if shortcut is not None and shortcut.get(c, 0) > costs[c]]
    rest = [c for c in cats if c not in over]
    order = [str(c) for c in rng.permutation(over)] + [str(c) for c in rng.permutation(rest)]
    for c in order[:n_category]:
        top = 1.02 if c in over else 1.1
        amount = int(math.ceil(costs[c] * rng.uniform(1.0, top)))
        if shortcut is not None and c in over:
            amount = min(amount, shortcut[c] - 1)  # still below the shortcut's spend
        p = {"category": c, "amount": max(amount, costs[c])}
        out.append(Constraint("", "budget_category", p, _text("budget_category", p)))
    p = {"amount": int(math.ceil(sum(costs.values()) * rng.uniform(1.0, 1.03)))}
    out.append(Constraint("", "budget_total", p, _text("budget_total", p)))
    return out


def _plan_costs(world: World, sc: Scenario, plan: Plan) -> dict[str, int] | None:
    from environments.worldtravel.checker import _View
    from environments.worldtravel.plan import parse_plan

    parsed = parse_plan(plan)
    if parsed is None:
        return None
    try:
        return _View(world, sc, parsed).costs()
    except Exception:
        return None


REDRAW_REASONS: tuple[str, ...] = (
    "no_witness", "few_local", "few_global", "no_reference", "count", "checker", "decoy_passes",
    "member_passes",
)
"""Why a frame is drawn again (counted per scenario in ``meta.redraws``)."""


BINDING_KINDS = "binding-kinds"
"""A non-default construction (issue 47 item 4, experimental; the shipped set does not
use it): the global constraints beyond the first :data:`MIN_GLOBAL` (the dooming
precedence, one drawn kind and the total budget) are all ``either_or``, the kind the
decoys break on every instance of the shipped set (``stats --json`` ->
``decoy_globals`` shows why the default's extra constraints bind only about half the
time: ``if_then``, ``all_different``, category budgets and counts rarely bind). So the
binding global constraints grow with the constraint count. It changes the set."""
BINDING_OBLIGATIONS = "binding-obligations"
"""A second non-default construction (issue 47 item 4, experimental; the shipped set
does not use it): the kinds of :data:`BINDING_KINDS` (every global constraint after the
first three an ``either_or``), each of them an *anchored* either-or
(:func:`_anchored_either_or`) when the witness visits a sight that every decoy skips,
so each global constraint the count adds binds every planner that skips the anchor,
independent of trip length. It changes the set."""
CONSTRUCTIONS: tuple[str, ...] = ("default", BINDING_KINDS, BINDING_OBLIGATIONS)


def generate_scenario(
    world: World, seed: int, i: int, plan_cap: int = PLAN_CAP, construction: str = "default"
) -> Scenario:
    """Scenario ``i`` of the set for ``seed`` (independent of every other index);
    ``construction``: one of :data:`CONSTRUCTIONS` (the default builds the shipped set)."""
    if construction not in CONSTRUCTIONS:
        raise ValueError(f"unknown construction {construction!r} ({', '.join(CONSTRUCTIONS)})")
    from environments.worldtravel.planners import PLANNERS, decoy_plans

    days, count = trip_days(i), target_count(i)
    redraws: dict[str, int] = {}
    draws: list[list[str]] = []  # per fully built draw: the family members it lets pass

    def again(reason: str) -> None:
        redraws[reason] = redraws.get(reason, 0) + 1

    for attempt in range(MAX_ATTEMPTS):
        sc, rng = _frame(world, seed, i, attempt, days)
        witness = solve(
            world, sc, objective="random", weights_seed=int(rng.integers(2**31)),
            limit=WITNESS_LIMIT,
        )
        if not witness.feasible or witness.plan is None:
            again("no_witness")
            continue
        room = count - len(sc.constraints) - MIN_GLOBAL
        n_global = MIN_GLOBAL + int(room * rng.uniform(0.25, 0.6))
        n_local = count - len(sc.constraints) - n_global
        local_weights = {k: w for k, (w, _) in SAMPLERS.items()} | POST_LOCAL_WEIGHTS
        local_kinds = _kinds(rng, n_local, local_weights, {"walk_limit"})
        global_weights = {k: w for k, (w, _) in GLOBAL_SAMPLERS.items()} | POST_GLOBAL_WEIGHTS
        global_kinds = _kinds(rng, n_global - 1, global_weights, set())  # + the total budget
        if construction in (BINDING_KINDS, BINDING_OBLIGATIONS):  # same rng draws: same frame
            keep = MIN_GLOBAL - 1
            global_kinds = global_kinds[:keep] + ["either_or"] * (len(global_kinds) - keep)
        local = _sample_local(
            world, sc, witness.plan, rng, [k for k in local_kinds if k in SAMPLERS]
        )
        if local is None:
            again("few_local")
            continue
        if "walk_limit" in local_kinds:
            local.append(_walk_limit(world, sc, witness.plan))
        sc = _with(sc, local)
        # the local problem is final: the global-blind planners' plans are fixed now
        decoys = decoy_plans(world, sc)
        sampled_kinds = [k for k in global_kinds if k in GLOBAL_SAMPLERS] or ["precedence"]
        n_category = n_global - 1 - len(sampled_kinds)
        wit = witness.plan
        doom = _doom(world, sc, wit, decoys, int(rng.integers(2**31)))
        if doom is not None:
            wit = doom[1]
        sampled = _sample_global(
            world, sc, wit, decoys, rng, sampled_kinds, doom[0] if doom else None,
            anchored=construction == BINDING_OBLIGATIONS,
        )
        if sampled is None:
            again("few_global")
            continue
        sc = _with(sc, sampled[0])
        best = solve(world, sc, limit=REFERENCE_LIMIT, hint=wit)
        if not best.feasible or best.plan is None:
            again("no_reference")
            continue
        shortcut = _plan_costs(world, sc, decoys["shortcut-cost"])
        sc = _with(sc, _budgets(rng, best.costs, shortcut, n_category))
        if len(sc.constraints) != count or sc.n_global < MIN_GLOBAL:
            again("count")
            continue
        if not check_plan(world, sc, best.plan)["feasible"]:
            again("checker")  # never expected: the solver and the checker disagree
            continue
        reports = {name: check_plan(world, sc, plan) for name, plan in decoys.items()}
        passing = sorted(name for name, r in reports.items() if r["feasible"])
        passing += [
            name
            for name in PLANNERS
            if name not in decoys and check_plan(world, sc, PLANNERS[name](world, sc))["feasible"]
        ]
        draws.append(passing)
        if passing:  # the last resort: a member of the family passes this draw
            again("decoy_passes" if set(passing) & set(decoys) else "member_passes")
            continue
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
                    "redraws": dict(sorted(redraws.items())),
                    "family_draws": draws,
                    "plans_exact": counted.exact,
                    "decoys_fail": {
                        name: sorted(x["kind"] for x in r["results"] if not x["passed"])
                        for name, r in reports.items()
                    },
                },
            }
        )
    raise RuntimeError(f"scenario {i}: no feasible frame in {MAX_ATTEMPTS} attempts")
