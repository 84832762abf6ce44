"""Exact feasibility oracle with OR-Tools CP-SAT; its optimum is the reference plan.

The plan space is the scenario's frame (day shapes, endpoints, one hotel per city stay);
within it every constraint kind is encoded exactly as :mod:`checker` states it, so
"infeasible here" means no itinerary of the requested shape satisfies the constraints,
and every plan found here must pass the checker (tests hold the two to that). Travel
times, walking minutes and leg prices depend on the pair of places chosen and the mode:
each leg is an ``AddElement`` over a small (origin option x target option x mode) table.
The solve is single-threaded with a fixed seed and no wall-clock limit, so the same
scenario always gives the same plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from environments.worldtravel.model import (
    MODES,
    Attraction,
    Hotel,
    Restaurant,
    World,
    hhmm,
    open_intervals,
    weekday,
)
from environments.worldtravel.scenario import ROOM_CAPACITY, Constraint, Scenario

DAY_MAX = 24 * 60 - 1
DETERMINISTIC_LIMIT = 60.0


@dataclass
class _Pos:
    """One stop position of the frame and its decision variables."""

    day: int
    index: int
    kind: str  # start_station start_hotel venue link end_hotel end_station
    slot: str
    city: str
    start: cp_model.IntVar
    end: cp_model.IntVar
    cands: list[Any] = field(default_factory=list)
    x: list[cp_model.IntVar] = field(default_factory=list)
    stay: int | None = None
    node_in: tuple[list[int], Any] = ([], 0)
    node_out: tuple[list[int], Any] = ([], 0)


@dataclass
class _Leg:
    day: int
    origin: _Pos
    target: _Pos
    city: str
    y: list[cp_model.IntVar]
    minutes: cp_model.IntVar
    walk: cp_model.IntVar
    cost: cp_model.IntVar


@dataclass
class SolveResult:
    """Outcome of one oracle call."""

    feasible: bool
    optimal: bool
    plan: dict[str, Any] | None
    cost: int | None
    plans_found: int
    costs: dict[str, int] = field(default_factory=dict)


class _Model:
    """The CP-SAT model of one scenario under a given constraint list."""

    def __init__(self, world: World, scenario: Scenario, constraints: list[Constraint]) -> None:
        self.w, self.sc, self.cons = world, scenario, constraints
        self.m = cp_model.CpModel()
        self.by_kind: dict[str, list[dict[str, Any]]] = {}
        for c in constraints:
            self.by_kind.setdefault(c.kind, []).append(c.params)
        self.pos: list[_Pos] = []
        self.days: dict[int, list[_Pos]] = {}
        self.legs: list[_Leg] = []
        self.stays: list[tuple[str, list[int], list[tuple[Hotel, str]], list[cp_model.IntVar]]] = []
        self.cost: dict[str, Any] = {}
        self._cache: dict[Any, Any] = {}
        self._build()

    # ------------------------------------------------------------------ candidates
    def _allowed_venue(self, rec: Attraction | Restaurant, day: int, slot: str) -> bool:
        date = self.sc.date(day)
        if not open_intervals(rec, date):
            return False
        for p in self.by_kind.get("exclude", []):
            if p["id"] == rec.id:
                return False
        for p in self.by_kind.get("rating_floor", []):
            if p["target"] == (
                "attraction" if slot == "attraction" else "restaurant"
            ) and rec.rating < float(p["min_rating"]):
                return False
        if isinstance(rec, Restaurant):
            for p in self.by_kind.get("cuisine", []):
                if p["meal"] == slot and rec.cuisine not in p["cuisines"]:
                    return False
        else:
            for p in self.by_kind.get("booking_lead", []):
                if rec.booking_lead_days > int(p["days_ahead"]) + day - 1:
                    return False
        return True

    def _allowed_hotel(self, hotel: Hotel, room: str, nights: int) -> bool:
        if ROOM_CAPACITY[room] < self.sc.party or hotel.min_nights > nights:
            return False
        for p in self.by_kind.get("room_type", []):
            if p["room"] != room:
                return False
        for p in self.by_kind.get("rating_floor", []):
            if p["target"] == "hotel" and hotel.rating < float(p["min_rating"]):
                return False
        for p in self.by_kind.get("hotel_rules", []):
            if any(getattr(hotel, k) != want for k, want in p.items()):
                return False
        return True

    # ------------------------------------------------------------------ building
    def _var(self, name: str, lo: int = 0, hi: int = DAY_MAX) -> cp_model.IntVar:
        return self.m.new_int_var(lo, hi, name)

    def _one_of(self, pos: _Pos, name: str) -> None:
        pos.x = [self.m.new_bool_var(f"{name}_{i}") for i in range(len(pos.cands))]
        self.m.add_exactly_one(pos.x)

    def _build(self) -> None:
        sc, w, m = self.sc, self.w, self.m
        night_stay: dict[int, int] = {}
        for s, (city, nights) in enumerate(sc.stays()):
            hotels = [h for h in w.hotels if h.city == city]
            opts = [
                (h, r) for h in hotels for r in h.prices if self._allowed_hotel(h, r, len(nights))
            ]
            z = [m.new_bool_var(f"z{s}_{i}") for i in range(len(opts))]
            m.add_exactly_one(z)
            self.stays.append((city, nights, opts, z))
            for n in nights:
                night_stay[n] = s
        for d in range(1, sc.days + 1):
            date = sc.date(d)
            slots = sc.skeleton[d - 1]
            day: list[_Pos] = []
            # the start point
            start_city = sc.cities[0] if d == 1 else sc.night_city(d - 1)
            kind = "start_station" if d == 1 else "start_hotel"
            t = self._var(f"t{d}_0")
            first = _Pos(d, 0, kind, kind, start_city, t, t)
            if d == 1:
                m.add(t >= sc.arrival)
            else:
                first.stay = night_stay[d - 1]
            day.append(first)
            for j, slot in enumerate(slots):
                city = sc.slot_city(d, j)
                pos = _Pos(
                    d,
                    j + 1,
                    "link" if slot == "link" else "venue",
                    slot,
                    city,
                    self._var(f"s{d}_{j}"),
                    self._var(f"e{d}_{j}"),
                )
                m.add(pos.end >= pos.start)
                if slot == "link":
                    self._link(pos, date)
                else:
                    self._venue(pos, date, d)
                day.append(pos)
            end_city = sc.cities[-1] if d == sc.days else sc.night_city(d)
            kind = "end_station" if d == sc.days else "end_hotel"
            t = self._var(f"t{d}_end")
            last = _Pos(d, len(slots) + 1, kind, kind, end_city, t, t)
            if d == sc.days:
                m.add(t <= sc.departure)
            else:
                last.stay = night_stay[d]
            day.append(last)
            for p in day:
                self._nodes(p)
            self.days[d] = day
            self.pos += day
            for a, b in zip(day, day[1:], strict=False):
                self._leg(a, b)
        self._lodging_times()
        self._costs()
        for kind, instances in self.by_kind.items():
            handler = getattr(self, f"_c_{kind}", None)
            for params in instances:
                if handler is not None:
                    handler(params)

    def _venue(self, pos: _Pos, date: str, day: int) -> None:
        recs: list[Attraction | Restaurant]
        if pos.slot == "attraction":
            recs = [a for a in self.w.attractions if a.city == pos.city]
        else:
            recs = [r for r in self.w.restaurants if r.city == pos.city]
        pos.cands = [r for r in recs if self._allowed_venue(r, day, pos.slot)]
        self._one_of(pos, f"x{day}_{pos.index}")
        m = self.m
        dur = [r.visit_minutes if isinstance(r, Attraction) else r.meal_minutes for r in pos.cands]
        m.add(pos.end - pos.start >= sum(k * x for k, x in zip(dur, pos.x, strict=True)))
        for rec, x in zip(pos.cands, pos.x, strict=True):
            intervals = open_intervals(rec, date)
            if len(intervals) == 1:
                a, b = intervals[0]
                m.add(pos.start >= a).only_enforce_if(x)
                m.add(pos.end <= b).only_enforce_if(x)
            else:
                u = [m.new_bool_var("") for _ in intervals]
                m.add(sum(u) == x)
                for (a, b), ui in zip(intervals, u, strict=True):
                    m.add(pos.start >= a).only_enforce_if(ui)
                    m.add(pos.end <= b).only_enforce_if(ui)
            slots = rec.timed_entry if isinstance(rec, Attraction) else rec.seatings
            if slots:
                m.add_linear_expression_in_domain(
                    pos.start, cp_model.Domain.from_values(slots)
                ).only_enforce_if(x)

    def _link(self, pos: _Pos, date: str) -> None:
        wd = weekday(date)
        a, b = self.sc.cities[0], self.sc.cities[-1]
        required = [
            p["require"]
            for p in self.by_kind.get("transport_mode", [])
            if p["scope"] == "intercity"
        ]
        links = [
            x
            for x in self.w.links
            if x.origin == a
            and x.destination == b
            and x.weekdays[wd]
            and all(x.mode == r for r in required)
        ]
        pos.cands = [(x, cls) for x in links for cls in x.prices]
        self._one_of(pos, f"l{pos.day}")
        self.m.add(
            pos.start == sum(x.depart * v for (x, _), v in zip(pos.cands, pos.x, strict=True))
        )
        self.m.add(pos.end == sum(x.arrive * v for (x, _), v in zip(pos.cands, pos.x, strict=True)))

    def _nodes(self, p: _Pos) -> None:
        station = len(self.w.city(p.city).nodes) - 1
        if p.kind in ("start_station", "end_station"):
            p.node_in = p.node_out = ([station], 0)
        elif p.kind in ("start_hotel", "end_hotel"):
            assert p.stay is not None
            _, _, opts, z = self.stays[p.stay]
            nodes = sorted({h.location for h, _ in opts})
            index = {n: i for i, n in enumerate(nodes)}
            expr = sum(index[h.location] * v for (h, _), v in zip(opts, z, strict=True))
            p.node_in = p.node_out = (nodes, expr)
        elif p.kind == "link":
            a = len(self.w.city(self.sc.cities[0]).nodes) - 1
            b = len(self.w.city(self.sc.cities[-1]).nodes) - 1
            p.node_in, p.node_out = ([a], 0), ([b], 0)
        else:
            nodes = [r.location for r in p.cands]
            expr = sum(i * v for i, v in enumerate(p.x))
            p.node_in = p.node_out = (nodes, expr)

    def _lits(self, p: _Pos, side: str) -> tuple[list[int], list[Any]]:
        """(nodes, literal per node) of where a position is, on its ``side``."""
        nodes, _ = p.node_in if side == "in" else p.node_out
        if len(nodes) == 1:
            return nodes, [1]
        if p.kind in ("start_hotel", "end_hotel"):
            assert p.stay is not None
            _, _, opts, z = self.stays[p.stay]
            key = (p.stay, "hotel-nodes")
            if key not in self._cache:
                lits = []
                for n in nodes:
                    b = self.m.new_bool_var("")
                    self.m.add(
                        b == sum(v for (h, _), v in zip(opts, z, strict=True) if h.location == n)
                    )
                    lits.append(b)
                self._cache[key] = lits
            return nodes, self._cache[key]
        return nodes, list(p.x)

    def _leg(self, a: _Pos, b: _Pos) -> None:
        m = self.m
        city = self.w.city(b.city if b.kind != "link" else self.sc.cities[0])
        fn, fl = self._lits(a, "out")
        tn, tl = self._lits(b, "in")
        y = [m.new_bool_var(f"y{a.day}_{a.index}_{k}") for k in range(len(MODES))]
        m.add_exactly_one(y)
        if len(fn) == 1 or len(tn) == 1:
            pairs = [
                (f, t, lf if len(fn) > 1 else lt)
                for f, lf in zip(fn, fl, strict=True)
                for t, lt in zip(tn, tl, strict=True)
            ]
        else:
            pairs = []
            arcs = {(i, j): m.new_bool_var("") for i in range(len(fn)) for j in range(len(tn))}
            for i, lf in enumerate(fl):
                m.add(sum(arcs[i, j] for j in range(len(tn))) == lf)
            for j, lt in enumerate(tl):
                m.add(sum(arcs[i, j] for i in range(len(fn))) == lt)
            pairs = [(fn[i], tn[j], v) for (i, j), v in arcs.items()]
        top = max(city.times["walk"][f][t] for f, t, _ in pairs)
        leg = _Leg(
            a.day,
            a,
            b,
            city.id,
            y,
            m.new_int_var(0, top, ""),
            m.new_int_var(0, top, ""),
            m.new_int_var(
                0,
                max(
                    max(city.taxi_fares[f][t] for f, t, _ in pairs),
                    city.transit_fare * self.sc.party,
                ),
                "",
            ),
        )
        for k, mode in enumerate(MODES):
            minutes = sum(city.times[mode][f][t] * v for f, t, v in pairs)
            m.add(leg.minutes == minutes).only_enforce_if(y[k])
        m.add(leg.walk == leg.minutes).only_enforce_if(y[0])
        m.add(leg.walk == 0).only_enforce_if(y[0].Not())
        m.add(leg.cost == 0).only_enforce_if(y[0])
        m.add(leg.cost == city.transit_fare * self.sc.party).only_enforce_if(y[1])
        m.add(leg.cost == sum(city.taxi_fares[f][t] * v for f, t, v in pairs)).only_enforce_if(y[2])
        m.add(b.start >= a.end + leg.minutes)
        self.legs.append(leg)

    def _lodging_times(self) -> None:
        for s, (_, nights, opts, z) in enumerate(self.stays):
            arrive = self.days[nights[0]][-1]
            leave = self.days[nights[-1] + 1][0]
            assert arrive.stay == s and leave.stay == s
            self.m.add(
                arrive.start >= sum(h.check_in * v for (h, _), v in zip(opts, z, strict=True))
            )
            self.m.add(leave.end <= sum(h.check_out * v for (h, _), v in zip(opts, z, strict=True)))

    def _costs(self) -> None:
        party = self.sc.party
        lodging: Any = 0
        for _, nights, opts, z in self.stays:
            for (h, room), v in zip(opts, z, strict=True):
                price = sum(h.prices[room][self.w.date_index(self.sc.date(n))] for n in nights)
                lodging += price * v
        food: Any = 0
        acts: Any = 0
        transport: Any = sum(leg.cost for leg in self.legs)
        for p in self.pos:
            if p.kind == "venue":
                for rec, v in zip(p.cands, p.x, strict=True):
                    if isinstance(rec, Restaurant):
                        food += rec.price * party * v
                    else:
                        acts += rec.price * party * v
            elif p.kind == "link":
                transport += sum(
                    x.prices[cls] * party * v for (x, cls), v in zip(p.cands, p.x, strict=True)
                )
        self.cost = {"lodging": lodging, "food": food, "activities": acts, "transport": transport}

    # ------------------------------------------------------------------ helpers
    def _visits(self, venue_id: str, day: int | None = None) -> list[tuple[_Pos, Any]]:
        return [
            (p, v)
            for p in self.pos
            if p.kind == "venue" and (day is None or p.day == day)
            for rec, v in zip(p.cands, p.x, strict=True)
            if rec.id == venue_id
        ]

    def _attraction_lits(self, day: int | None = None) -> list[tuple[_Pos, Attraction, Any]]:
        return [
            (p, rec, v)
            for p in self.pos
            if p.kind == "venue" and p.slot == "attraction" and (day is None or p.day == day)
            for rec, v in zip(p.cands, p.x, strict=True)
        ]

    def _fail(self) -> None:
        self.m.add_bool_or([])  # an empty clause: infeasible

    def _any(self, lits: list[Any]) -> Any:
        flag = self.m.new_bool_var("")
        if not lits:
            self.m.add(flag == 0)
            return flag
        for lit in lits:
            self.m.add_implication(lit, flag)
        self.m.add_bool_or(lits).only_enforce_if(flag)
        return flag

    # ------------------------------------------------------------------ constraint kinds
    # base kinds are built into the frame; exclude/cuisine/rating/booking/room/hotel rules
    # and intercity modes prune candidates above. The rest:
    def _c_meal_window(self, p: dict[str, Any]) -> None:
        meals = [q for q in self.days[int(p["day"])] if q.slot == p["meal"]]
        if not meals:
            self._fail()
        for q in meals:
            self.m.add(q.start >= int(p["from"]))
            self.m.add(q.start <= int(p["to"]))

    def _c_visit_window(self, p: dict[str, Any]) -> None:
        hits = self._visits(p["attraction"], int(p["day"]))
        ws = []
        for q, x in hits:
            wv = self.m.new_bool_var("")
            self.m.add_implication(wv, x)
            self.m.add(q.start >= int(p["from"])).only_enforce_if(wv)
            self.m.add(q.start <= int(p["to"])).only_enforce_if(wv)
            ws.append(wv)
        if not ws:
            self._fail()
        else:
            self.m.add_bool_or(ws)

    def _c_day_bounds(self, p: dict[str, Any]) -> None:
        for q in self.pos:
            if q.kind == "start_hotel":
                self.m.add(q.end >= int(p["leave_after"]))
            elif q.kind == "end_hotel":
                self.m.add(q.start <= int(p["back_by"]))

    def _c_connection_buffer(self, p: dict[str, Any]) -> None:
        legs = [g for g in self.legs if g.day == int(p["day"]) and g.target.kind == "link"]
        if not legs:
            self._fail()
        for g in legs:
            self.m.add(g.target.start - g.origin.end - g.minutes >= int(p["minutes"]))

    def _c_precedence(self, p: dict[str, Any]) -> None:
        first, then = self._visits(p["first"]), self._visits(p["then"])
        if not first or not then:
            self._fail()
            return
        self.m.add_bool_or([x for _, x in first])
        self.m.add_bool_or([x for _, x in then])
        order = {id(q): i for i, q in enumerate(self.pos)}
        for qa, xa in first:
            for qb, xb in then:
                if order[id(qa)] >= order[id(qb)]:
                    self.m.add_bool_or([xa.Not(), xb.Not()])

    def _c_either_or(self, p: dict[str, Any]) -> None:
        a = self._any([x for _, x in self._visits(p["a"])])
        b = self._any([x for _, x in self._visits(p["b"])])
        self.m.add(a + b == 1)

    def _c_if_then(self, p: dict[str, Any]) -> None:
        d = int(p["day"])
        lits = [v for _, rec, v in self._attraction_lits(d) if rec.category == p["category"]]
        flag = self._any(lits)
        k = MODES.index(p["forbid_mode"])
        for g in self.legs:
            if g.day == d:
                self.m.add(g.y[k] == 0).only_enforce_if(flag)

    def _c_count(self, p: dict[str, Any]) -> None:
        total = sum(v for _, rec, v in self._attraction_lits() if rec.category == p["category"])
        if p["op"] == "at_least":
            self.m.add(total >= int(p["n"]))
        else:
            self.m.add(total <= int(p["n"]))

    def _c_all_different(self, p: dict[str, Any]) -> None:
        slot_ok = (
            (lambda s: s == "attraction")
            if p["target"] == "attraction"
            else (lambda s: s in ("lunch", "dinner"))
        )
        groups: dict[str, list[Any]] = {}
        for q in self.pos:
            if q.kind == "venue" and slot_ok(q.slot):
                for rec, v in zip(q.cands, q.x, strict=True):
                    groups.setdefault(rec.id, []).append(v)
        for lits in groups.values():
            if len(lits) > 1:
                self.m.add_at_most_one(lits)

    def _c_budget_total(self, p: dict[str, Any]) -> None:
        self.m.add(sum(self.cost.values()) <= int(p["amount"]))

    def _c_budget_category(self, p: dict[str, Any]) -> None:
        self.m.add(self.cost[p["category"]] <= int(p["amount"]))

    def _c_walk_limit(self, p: dict[str, Any]) -> None:
        for d in self.days:
            self.m.add(sum(g.walk for g in self.legs if g.day == d) <= int(p["minutes"]))

    def _c_transport_mode(self, p: dict[str, Any]) -> None:
        if p["scope"] == "local":
            k = MODES.index(p["forbid"])
            for g in self.legs:
                self.m.add(g.y[k] == 0)

    # ------------------------------------------------------------------ reading solutions
    def decisions(self) -> list[Any]:
        lits = [v for q in self.pos for v in q.x]
        return lits + [v for *_, z in self.stays for v in z]

    def extract(self, s: cp_model.CpSolver) -> dict[str, Any]:
        lodging = []
        for city, nights, opts, z in self.stays:
            h, room = next(o for o, v in zip(opts, z, strict=True) if s.value(v))
            lodging.append({"city": city, "hotel": h.id, "room": room, "nights": list(nights)})
        hotel_of = {n: entry["hotel"] for entry in lodging for n in entry["nights"]}
        leg_from = {id(g.origin): g for g in self.legs}
        days = []
        for d, day in self.days.items():
            stops = []
            for q in day:
                stop: dict[str, Any]
                if q.kind in ("start_station", "end_station"):
                    stop = {"kind": "station", "id": self.w.city(q.city).station}
                elif q.kind == "start_hotel":
                    stop = {"kind": "hotel", "id": hotel_of[d - 1]}
                elif q.kind == "end_hotel":
                    stop = {"kind": "hotel", "id": hotel_of[d]}
                else:
                    chosen = next(c for c, v in zip(q.cands, q.x, strict=True) if s.value(v))
                    if q.kind == "link":
                        stop = {"kind": "link", "id": chosen[0].id, "fare_class": chosen[1]}
                    elif q.slot == "attraction":
                        stop = {"kind": "attraction", "id": chosen.id}
                    else:
                        stop = {"kind": "restaurant", "id": chosen.id, "meal": q.slot}
                if q.kind not in ("start_station", "start_hotel"):
                    stop["start"] = hhmm(s.value(q.start))
                if q.kind not in ("end_station", "end_hotel"):
                    stop["end"] = hhmm(s.value(q.end))
                    g = leg_from[id(q)]
                    stop["transport_to_next"] = MODES[[s.value(v) for v in g.y].index(1)]
                stops.append(stop)
            days.append({"day": d, "stops": stops})
        return {"lodging": lodging, "days": days}


def _solver() -> cp_model.CpSolver:
    s = cp_model.CpSolver()
    s.parameters.num_workers = 1
    s.parameters.random_seed = 0
    s.parameters.max_deterministic_time = DETERMINISTIC_LIMIT
    # measured: probing and symmetry detection cost more than they save on these models
    s.parameters.cp_model_probing_level = 0
    s.parameters.symmetry_level = 0
    return s


def solve(
    world: World,
    scenario: Scenario,
    constraints: list[Constraint] | None = None,
    *,
    objective: str = "cost",
    weights_seed: int | None = None,
    count_cap: int = 1,
) -> SolveResult:
    """Solve ``scenario`` (or it under ``constraints``) exactly.

    Args:
        objective: ``cost`` (minimum total cost: the reference plan) or ``random``
            (minimum of random weights on the choices, seeded by ``weights_seed``: a
            diverse witness plan for the scenario generator).
        count_cap: Also count distinct plans (venue, link and hotel choices) up to this
            cap by re-solving with no-good cuts; 1 skips counting.
    """
    model = _Model(world, scenario, scenario.constraints if constraints is None else constraints)
    m = model.m
    total = sum(model.cost.values())
    if objective == "cost":
        m.minimize(total)
    else:
        rng = np.random.default_rng(weights_seed)
        lits = model.decisions()
        weights = rng.integers(0, 100, size=len(lits))
        m.minimize(sum(int(k) * v for k, v in zip(weights, lits, strict=True)))
    s = _solver()
    status = s.solve(m)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return SolveResult(False, status == cp_model.INFEASIBLE, None, None, 0)
    optimal = status == cp_model.OPTIMAL
    chosen = [v for v in model.decisions() if s.value(v)]
    costs = {k: int(s.value(v)) if not isinstance(v, int) else v for k, v in model.cost.items()}
    s = _compact(model, s)
    plan = model.extract(s)
    found = 1
    if count_cap > 1:
        m.clear_objective()
        m.add_bool_or([v.Not() for v in chosen])
        while found < count_cap:
            s2 = _solver()
            if s2.solve(m) not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
                break
            found += 1
            m.add_bool_or([v.Not() for v in model.decisions() if s2.value(v)])
    return SolveResult(True, optimal, plan, int(sum(costs.values())), found, costs)


def _compact(model: _Model, s: cp_model.CpSolver) -> cp_model.CpSolver:
    """Re-time the chosen plan so each day is as short as possible (same choices, cost).

    The cost objective does not care when a day starts, so the first solution may leave
    the hotel at midnight and wait; fixing every choice and minimising the days' spans
    gives human-looking times at the price of one tiny extra solve.
    """
    fixed = [v for q in model.pos for v in q.x] + [v for *_, z in model.stays for v in z]
    fixed += [v for g in model.legs for v in g.y]
    values = [s.value(v) for v in fixed]
    proto = model.m.clone()
    for v, val in zip(fixed, values, strict=True):
        proto.add(proto.get_bool_var_from_proto_index(v.index) == val)
    proto.clear_objective()
    span = sum(
        proto.get_int_var_from_proto_index(day[-1].start.index)
        - proto.get_int_var_from_proto_index(day[0].end.index)
        for day in model.days.values()
    )
    proto.minimize(span)
    s2 = _solver()
    if s2.solve(proto) not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return s
    # map the clone's solution back by index
    return _Remapped(s2, proto)  # type: ignore[return-value]


class _Remapped:
    """Read values of the original model's variables from a solution of its clone."""

    def __init__(self, solver: cp_model.CpSolver, proto: cp_model.CpModel) -> None:
        self.solver, self.proto = solver, proto

    def value(self, var: Any) -> int:
        if isinstance(var, int):
            return var
        return int(self.solver.value(self.proto.get_int_var_from_proto_index(var.index)))
