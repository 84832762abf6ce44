"""Exact feasibility oracle with OR-Tools CP-SAT; its optimum is the reference plan.

The plan space is the scenario's frame (day shapes, endpoints, one hotel per city stay);
within it every constraint kind is encoded exactly as :mod:`checker` states it, so
"infeasible here" means no itinerary of the requested shape satisfies the constraints,
and every plan found here must pass the checker (tests hold the two to that). Travel
times, walking minutes and leg prices depend on the pair of places chosen and the mode:
per leg, for each origin option and mode, the minutes are a linear sum over the target
options' literals (no literal per origin x target pair, which made every solve several
times slower; see ``_Model._leg``).
Every solve is single-threaded with a fixed seed and a *deterministic* work limit
(``max_deterministic_time``, never a wall-clock limit), so the same scenario gives the
same plan on any machine under any load. :func:`count_plans` enumerates plans on a
variant of the model whose times are pinned to the earliest schedule (one solution per
plan), and :func:`coupling` relaxes the global constraints behind enforcement literals
to measure how many of them a single early decision forces a plan to break. Both have
small deterministic budgets (sized before issue 47's planner family, when the set
generated in about a minute on 2 cores) and say when they stopped early:
``PlanCount.exact`` and the diagnostic's ``exact`` / ``unresolved``.

Models built on the same frame (world, scenario frame, candidate filters) clone it from
a small cache (:class:`_FrameCache`) rather than build it again; the proto is the one a
fresh build gives, so every solve, and so the generated set, is unchanged. Most of the
generator's time is CP-SAT's own search (a deterministic budget cannot be cut without
changing the plans it finds).
"""

from __future__ import annotations

import json
from collections.abc import Callable
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
DETERMINISTIC_LIMIT = 10.0


class _CpModel(cp_model.CpModel):
    """OR-Tools' CP-SAT model without its per-instance pre-PEP 8 aliases.

    Why: ``cp_model.CpModel.__init__`` (and so every ``clone``) walks ``dir(self)`` and
    binds a camelCase alias for every ``add_``/``new_``/``clear_`` method: about 1.8 ms
    per model, and the generator makes several hundred models per scenario (clones of
    a cached frame, every ``_compact``), which measured 6% of its CPU. The aliases are
    Python attributes only; the proto, and so every solve, is the same (tested), and
    this code never calls the camelCase names."""

    def _add_pre_pep8_methods(self) -> None:
        return None

    def clone(self) -> _CpModel:
        """A copy of this model (same proto), itself without the aliases."""
        twin = _CpModel()
        twin.proto.copy_from(self.proto)
        twin.rebuild_constant_map()
        return twin


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


FRAME_KINDS: frozenset[str] = frozenset(
    {"exclude", "rating_floor", "cuisine", "booking_lead", "room_type", "hotel_rules",
     "transport_mode"}
)
"""Constraint kinds the frame reads (they prune candidates); every other kind only adds
constraints on top of it (``_Model._build_constraints``)."""


@dataclass(frozen=True)
class _Frame:
    """A built frame, kept for reuse: its CP-SAT model (never solved or extended, only
    cloned) and the Python handles on its variables."""

    world: World
    m: cp_model.CpModel
    pos: list[_Pos]
    days: dict[int, list[_Pos]]
    legs: list[_Leg]
    stays: list[tuple[str, list[int], list[tuple[Hotel, str]], list[cp_model.IntVar]]]
    cost: dict[str, Any]
    cache: dict[Any, Any]

    @classmethod
    def of(cls, model: _Model) -> _Frame:
        """Snapshot ``model`` right after its frame is built (before any constraint)."""
        return cls(
            model.w, model.m.clone(), list(model.pos),
            {d: list(day) for d, day in model.days.items()}, list(model.legs),
            list(model.stays), dict(model.cost), dict(model._cache),
        )


class _FrameCache:
    """The last few frames built, by world, scenario frame and candidate filters.

    Why: the generator builds a dozen models per draw that differ only in the
    constraints added on the same frame (the shortcut planners' three objectives, the
    beam's pinned re-solves, every lookahead step, the coupling scan). The key holds
    every field the frame reads, so a hit is the frame a fresh build would give."""

    SIZE = 8

    def __init__(self) -> None:
        self._items: dict[tuple[Any, ...], _Frame] = {}

    @staticmethod
    def key(world: World, sc: Scenario, constraints: list[Constraint]) -> tuple[Any, ...]:
        filters = tuple(
            (c.kind, json.dumps(c.params, sort_keys=True, default=str))
            for c in constraints
            if c.kind in FRAME_KINDS
        )
        return (
            id(world), sc.id, sc.family, tuple(sc.cities), sc.start_date, sc.days, sc.party,
            sc.arrival, sc.departure, sc.transfer_day, tuple(tuple(d) for d in sc.skeleton),
            filters,
        )

    def get(self, world: World, sc: Scenario, constraints: list[Constraint]) -> _Frame | None:
        key = self.key(world, sc, constraints)
        frame = self._items.pop(key, None)
        if frame is None or frame.world is not world:
            return None
        self._items[key] = frame  # most recently used last
        return frame

    def put(
        self, world: World, sc: Scenario, constraints: list[Constraint], frame: _Frame
    ) -> None:
        self._items[self.key(world, sc, constraints)] = frame
        while len(self._items) > self.SIZE:
            self._items.pop(next(iter(self._items)))

    def clear(self) -> None:
        self._items.clear()


_frames = _FrameCache()


class _Model:
    """The CP-SAT model of one scenario under a given constraint list."""

    def __init__(
        self,
        world: World,
        scenario: Scenario,
        constraints: list[Constraint],
        *,
        canonical: bool = False,
        soft: frozenset[str] = frozenset(),
    ) -> None:
        self.w, self.sc, self.cons = world, scenario, constraints
        self.canonical = canonical  # earliest-start times: one solution per plan
        self.soft = soft  # kinds whose instances get an enforcement literal
        self.enforced: list[tuple[Constraint, Any]] = []
        self._enf: list[Any] = []
        self.m: cp_model.CpModel = _CpModel()
        self.by_kind: dict[str, list[dict[str, Any]]] = {}
        for c in constraints:
            self.by_kind.setdefault(c.kind, []).append(c.params)
        self.pos: list[_Pos] = []
        self.days: dict[int, list[_Pos]] = {}
        self.legs: list[_Leg] = []
        self.stays: list[tuple[str, list[int], list[tuple[Hotel, str]], list[cp_model.IntVar]]] = []
        self.cost: dict[str, Any] = {}
        self._cache: dict[Any, Any] = {}
        frame = None if canonical else _frames.get(world, scenario, constraints)
        if frame is None:
            self._build_frame()
            if not canonical:
                _frames.put(world, scenario, constraints, _Frame.of(self))
        else:
            self._adopt(frame)
        self._build_constraints()

    def _adopt(self, frame: _Frame) -> None:
        """Start from a copy of ``frame``'s built frame (same world, scenario frame and
        candidate filters) instead of building it again: its CP-SAT model is cloned and
        its positions, legs, stays and cost expressions are shared by variable index,
        which the clone keeps. Building the frame is most of a model's Python cost, and
        the generator builds a dozen models per draw on the same frame; the clone's
        proto is the one a fresh build gives (tests compare them)."""
        self.m = frame.m.clone()
        self.pos = list(frame.pos)
        self.days = {d: list(day) for d, day in frame.days.items()}
        self.legs = list(frame.legs)
        self.stays = list(frame.stays)
        self.cost = dict(frame.cost)
        self._cache = dict(frame.cache)

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

    def _build_frame(self) -> None:
        """The plan space: stays, day positions, candidates, legs, lodging times, costs
        (and, for ``canonical``, the earliest-schedule pins)."""
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
                m.add(t == sc.arrival if self.canonical else t >= sc.arrival)
            else:
                first.stay = night_stay[d - 1]
                if self.canonical:  # leave as early as the day bounds allow
                    lows = [int(p["leave_after"]) for p in self.by_kind.get("day_bounds", [])]
                    m.add(t == max([0, *lows]))
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
        if self.canonical:
            self._earliest_times()

    def _build_constraints(self) -> None:
        """Each constraint instance by its handler (under an enforcement literal for the
        ``soft`` kinds)."""
        m = self.m
        for c in self.cons:
            handler = getattr(self, f"_c_{c.kind}", None)
            if handler is None:
                continue
            self._enf = []
            if c.kind in self.soft:
                lit = m.new_bool_var(f"holds_{c.id}")
                self.enforced.append((c, lit))
                self._enf = [lit]
            handler(c.params)
        self._enf = []

    def _add(self, ct: Any) -> None:
        """Add a linear constraint, under the current instance's enforcement literal."""
        added = self.m.add(ct)
        if self._enf:
            added.only_enforce_if(self._enf)

    def _add_or(self, lits: list[Any]) -> None:
        added = self.m.add_bool_or(lits)
        if self._enf:
            added.only_enforce_if(self._enf)

    # ------------------------------------------------------------------ canonical times
    def _start_domain(self, pos: _Pos, rec: Attraction | Restaurant) -> list[tuple[int, int]]:
        """Allowed start times of ``rec`` at ``pos`` as sorted disjoint [lo, hi] ranges:
        opening intervals (the whole visit inside), timed-entry slots, and the meal and
        visit windows that apply to this stop."""
        date = self.sc.date(pos.day)
        lo_w, hi_w = 0, DAY_MAX
        for p in self.by_kind.get("meal_window", []):
            if int(p["day"]) == pos.day and p["meal"] == pos.slot:
                lo_w, hi_w = max(lo_w, int(p["from"])), min(hi_w, int(p["to"]))
        for p in self.by_kind.get("visit_window", []):
            if int(p["day"]) == pos.day and p["attraction"] == rec.id:
                lo_w, hi_w = max(lo_w, int(p["from"])), min(hi_w, int(p["to"]))
        dur = rec.visit_minutes if isinstance(rec, Attraction) else rec.meal_minutes
        intervals = open_intervals(rec, date)
        slots = rec.timed_entry if isinstance(rec, Attraction) else rec.seatings
        if slots:
            ok = [
                s
                for s in sorted(set(slots))
                if lo_w <= s <= hi_w and any(a <= s and s + dur <= b for a, b in intervals)
            ]
            return [(s, s) for s in ok]
        out = [(max(a, lo_w), min(b - dur, hi_w)) for a, b in sorted(intervals)]
        return [(lo, hi) for lo, hi in out if lo <= hi]

    def _earliest_times(self) -> None:
        """Pin every time to the earliest schedule of the chosen places and modes.

        For fixed choices the feasible schedules are closed under the componentwise
        minimum (every time constraint is a lower bound, an upper bound, a difference
        ``b.start >= a.end + minutes`` or membership in a union of ranges), so the
        earliest schedule is feasible whenever any schedule is. Pinning it leaves one
        solution per plan (places, link, room, modes), which is what makes CP-SAT's
        solution enumeration a plan count.
        """
        m = self.m
        into = {id(g.target): g for g in self.legs}
        arrivals = {id(self.days[nights[0]][-1]): s for s, (_, nights, _, _) in
                    enumerate(self.stays)}
        for q in self.pos:
            g = into.get(id(q))
            if g is None or q.kind == "link":
                continue
            arrive = g.origin.end + g.minutes
            if q.kind == "end_station":
                m.add(q.start == arrive)
                continue
            if q.kind == "end_hotel":
                s = arrivals.get(id(q))
                if s is None:
                    m.add(q.start == arrive)
                else:
                    _, _, opts, z = self.stays[s]
                    check_in = sum(h.check_in * v for (h, _), v in zip(opts, z, strict=True))
                    m.add_max_equality(q.start, [arrive, check_in])
                continue
            for rec, x in zip(q.cands, q.x, strict=True):
                options = []
                prev_hi = -1
                for lo, hi in self._start_domain(q, rec):
                    if lo > prev_hi + 1:  # arrive in the gap before this range: wait for lo
                        b = m.new_bool_var("")
                        m.add(arrive >= prev_hi + 1).only_enforce_if(b)
                        m.add(arrive <= lo - 1).only_enforce_if(b)
                        m.add(q.start == lo).only_enforce_if(b)
                        options.append(b)
                    b = m.new_bool_var("")  # arrive inside the range: start at once
                    m.add(arrive >= lo).only_enforce_if(b)
                    m.add(arrive <= hi).only_enforce_if(b)
                    m.add(q.start == arrive).only_enforce_if(b)
                    options.append(b)
                    prev_hi = hi
                m.add(sum(options) == x)

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
        need = sum(k * x for k, x in zip(dur, pos.x, strict=True))
        m.add(pos.end - pos.start == need if self.canonical else pos.end - pos.start >= need)
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
        """Travel from ``a`` to ``b``: a mode literal per mode, and minutes, walking and
        fare as functions of (origin node, target node, mode).

        Why no arc literal per (origin, target) pair: with 16 candidates on each side
        that is 256 Booleans and two channelling sums per leg, which made every solve
        slow. Here, for each origin node (literal ``lf``) and mode, the leg's minutes
        equal a linear sum over the target literals (exactly one of which is true), so
        the model grows with origins + targets, and the meaning is unchanged.
        """
        m = self.m
        city = self.w.city(b.city if b.kind != "link" else self.sc.cities[0])
        fn, fl = self._lits(a, "out")
        tn, tl = self._lits(b, "in")
        y = [m.new_bool_var(f"y{a.day}_{a.index}_{k}") for k in range(len(MODES))]
        m.add_exactly_one(y)
        walk_t, fares = city.times["walk"], city.taxi_fares
        top = max(walk_t[f][t] for f in fn for t in tn)
        fare_top = max(max(fares[f][t] for f in fn for t in tn), city.transit_fare * self.sc.party)
        leg = _Leg(
            a.day, a, b, city.id, y,
            m.new_int_var(0, top, ""), m.new_int_var(0, top, ""), m.new_int_var(0, fare_top, ""),
        )
        # iterate over the side with fewer nodes; the other side is a linear sum
        rows_from = len(fn) <= len(tn)
        outer = list(zip(fn, fl, strict=True)) if rows_from else list(zip(tn, tl, strict=True))
        inner = list(zip(tn, tl, strict=True)) if rows_from else list(zip(fn, fl, strict=True))

        inner_lits = [lit for _, lit in inner]

        def table(grid: list[list[int]], o: int) -> Any:
            coefs = [grid[o][n] if rows_from else grid[n][o] for n, _ in inner]
            if len(coefs) == 1:
                return coefs[0]
            return cp_model.LinearExpr.weighted_sum(inner_lits, coefs)

        for o, lo in outer:
            lits = [] if isinstance(lo, int) else [lo]
            for k, mode in enumerate(MODES):
                m.add(leg.minutes == table(city.times[mode], o)).only_enforce_if([*lits, y[k]])
            m.add(leg.cost == table(fares, o)).only_enforce_if([*lits, y[2]])
        m.add(leg.walk == leg.minutes).only_enforce_if(y[0])
        m.add(leg.walk == 0).only_enforce_if(y[0].Not())
        m.add(leg.cost == 0).only_enforce_if(y[0])
        m.add(leg.cost == city.transit_fare * self.sc.party).only_enforce_if(y[1])
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
        if self.canonical:  # the window is in the start domain (every visit that day)
            self._add_or([x for _, x in hits])
            return
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
            self._add_or([])
            return
        self._add_or([x for _, x in first])
        self._add_or([x for _, x in then])
        order = {id(q): i for i, q in enumerate(self.pos)}
        for qa, xa in first:
            for qb, xb in then:
                if order[id(qa)] >= order[id(qb)]:
                    self._add_or([xa.Not(), xb.Not()])

    def _c_either_or(self, p: dict[str, Any]) -> None:
        a = self._any([x for _, x in self._visits(p["a"])])
        b = self._any([x for _, x in self._visits(p["b"])])
        self._add(a + b == 1)

    def _c_if_then(self, p: dict[str, Any]) -> None:
        d = int(p["day"])
        lits = [v for _, rec, v in self._attraction_lits(d) if rec.category == p["category"]]
        flag = self._any(lits)
        k = MODES.index(p["forbid_mode"])
        for g in self.legs:
            if g.day == d:
                self.m.add(g.y[k] == 0).only_enforce_if([flag, *self._enf])

    def _c_count(self, p: dict[str, Any]) -> None:
        total = sum(v for _, rec, v in self._attraction_lits() if rec.category == p["category"])
        if p["op"] == "at_least":
            self._add(total >= int(p["n"]))
        else:
            self._add(total <= int(p["n"]))

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
                self._add(sum(lits) <= 1)

    def _c_budget_total(self, p: dict[str, Any]) -> None:
        self._add(sum(self.cost.values()) <= int(p["amount"]))

    def _c_budget_category(self, p: dict[str, Any]) -> None:
        self._add(self.cost[p["category"]] <= int(p["amount"]))

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


_made = [0]


def solvers_made() -> int:
    """CP-SAT solvers made in this process so far (every one of them runs one solve).

    Why: generation time depends on the machine and its load, while the number of
    solves does not (each solve stops at a deterministic work limit), so the generator
    reports this count beside its wall and CPU seconds as the measure a speed-up must
    lower."""
    return _made[0]


def _solver(limit: float = DETERMINISTIC_LIMIT) -> cp_model.CpSolver:
    _made[0] += 1
    s = cp_model.CpSolver()
    s.parameters.num_workers = 1
    s.parameters.random_seed = 0
    # a deterministic work limit (not wall-clock): the same model stops at the same
    # point on any machine and under any load, so generated files do not depend on it
    s.parameters.max_deterministic_time = limit
    # measured: probing and symmetry detection cost more than they save on these models
    s.parameters.cp_model_probing_level = 0
    s.parameters.symmetry_level = 0
    return s


def _decision_values(model: _Model, plan: dict[str, Any]) -> list[tuple[Any, int]]:
    """The value a known plan gives each decision literal of ``model`` (venue, link and
    room choices and leg modes), matched by position; unmatched positions are left out."""
    out: list[tuple[Any, int]] = []
    days = {d["day"]: d["stops"] for d in plan.get("days", [])}
    for q in model.pos:
        stops = days.get(q.day, [])
        if q.index >= len(stops):
            continue
        stop = stops[q.index]
        if q.x:
            for c, v in zip(q.cands, q.x, strict=True):
                ident = c[0].id if q.kind == "link" else c.id
                same = ident == stop.get("id") and (
                    q.kind != "link" or c[1] == stop.get("fare_class")
                )
                out.append((v, int(same)))
    for g in model.legs:
        stops = days.get(g.day, [])
        if g.origin.index >= len(stops):
            continue
        mode = stops[g.origin.index].get("transport_to_next")
        if mode in MODES:
            out += [(v, int(MODES[k] == mode)) for k, v in enumerate(g.y)]
    booked = {(x.get("hotel"), x.get("room")) for x in plan.get("lodging", [])}
    for *_, opts, z in model.stays:
        out += [(v, int((h.id, room) in booked)) for (h, room), v in zip(opts, z, strict=True)]
    return out


def _hint(model: _Model, plan: dict[str, Any]) -> None:
    """Hint CP-SAT with a known plan (the generator's witness)."""
    for v, value in _decision_values(model, plan):
        model.m.add_hint(v, value)


def solve(
    world: World,
    scenario: Scenario,
    constraints: list[Constraint] | None = None,
    *,
    objective: str = "cost",
    weights_seed: int | None = None,
    count_cap: int = 1,
    limit: float = DETERMINISTIC_LIMIT,
    hint: dict[str, Any] | None = None,
) -> SolveResult:
    """Solve ``scenario`` (or it under ``constraints``).

    Args:
        objective: ``cost`` (minimum total cost: the reference plan) or ``random``
            (minimum of random weights on the choices, seeded by ``weights_seed``: a
            diverse witness plan for the scenario generator).
        count_cap: Also count distinct plans up to this cap (:func:`count_plans`);
            1 skips counting.
        limit: Deterministic-time budget of the solve (CP-SAT's work units, not
            seconds); ``optimal`` says whether the optimum was proven within it.
        hint: A plan to start the search from (any plan of the frame).
    """
    model = _Model(world, scenario, scenario.constraints if constraints is None else constraints)
    set_objective(model, objective, weights_seed)
    if hint is not None:
        _hint(model, hint)
    result = solve_model(model, limit)
    if result.feasible and count_cap > 1:
        result.plans_found = count_plans(world, scenario, constraints, cap=count_cap).plans
    return result


OBJECTIVES: tuple[str, ...] = ("cost", "random", "time", "slack")
"""What :func:`solve` can minimise: ``cost`` (the reference plan), ``random`` (random
weights on the choices: a diverse witness), ``time`` (total travel minutes, then cost)
and ``slack`` (the least committed time: travel plus visit minutes, then cost, i.e. the
most free time in the days). The last two are objectives of the shortcut planners
(:mod:`environments.worldtravel.planners`)."""

_TIE = 100_000  # cost never reaches this: a lexicographic (minutes, then cost) objective


def set_objective(model: _Model, objective: str, weights_seed: int | None = None) -> None:
    """Put one of :data:`OBJECTIVES` on ``model`` (raises ValueError for another name)."""
    m = model.m
    total = sum(model.cost.values())
    if objective == "cost":
        m.minimize(total)
    elif objective == "random":
        rng = np.random.default_rng(weights_seed)
        lits = model.decisions()
        weights = rng.integers(0, 100, size=len(lits))
        m.minimize(sum(int(k) * v for k, v in zip(weights, lits, strict=True)))
    elif objective == "time":
        m.minimize(_TIE * sum(g.minutes for g in model.legs) + total)
    elif objective == "slack":
        busy = sum(g.minutes for g in model.legs) + sum(
            q.end - q.start for q in model.pos if q.kind == "venue"
        )
        m.minimize(_TIE * busy + total)
    else:
        raise ValueError(f"unknown objective {objective!r} (one of {', '.join(OBJECTIVES)})")


def solve_model(
    model: _Model,
    limit: float = DETERMINISTIC_LIMIT,
    make_solver: Callable[[float], cp_model.CpSolver] | None = None,
) -> SolveResult:
    """Solve a built model (objective set) and read the plan, re-timed to compact days
    (``make_solver``: another deterministic solver configuration)."""
    s = (make_solver or _solver)(limit)
    status = s.solve(model.m)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return SolveResult(False, status == cp_model.INFEASIBLE, None, None, 0)
    optimal = status == cp_model.OPTIMAL
    costs = {k: int(s.value(v)) if not isinstance(v, int) else v for k, v in model.cost.items()}
    s = _compact(model, s)
    plan = model.extract(s)
    return SolveResult(True, optimal, plan, int(sum(costs.values())), 1, costs)


COUNT_CAP = 1000
COUNT_LIMIT = 0.2


@dataclass(frozen=True)
class PlanCount:
    """Outcome of :func:`count_plans`: ``plans`` distinct plans found; ``exact`` when
    the enumeration finished below the cap (else the count is ``>= plans``)."""

    plans: int
    cap: int
    exact: bool


class _Counter(cp_model.CpSolverSolutionCallback):
    def __init__(self, keys: list[Any], cap: int) -> None:
        super().__init__()
        self.keys, self.cap = keys, cap
        self.indices = [v.index for v in keys]  # plain Boolean variables, not negations
        self.seen: set[tuple[int, ...]] = set()
        self.solutions = 0

    def on_solution_callback(self) -> None:
        self.solutions += 1
        # one read of the whole solution (per-variable value() calls cost ~8x more)
        values = self.response_proto.solution
        self.seen.add(tuple(values[i] for i in self.indices))
        if len(self.seen) >= self.cap:
            self.stop_search()


def count_plans(
    world: World,
    scenario: Scenario,
    constraints: list[Constraint] | None = None,
    *,
    cap: int = COUNT_CAP,
    limit: float = COUNT_LIMIT,
    known: tuple[dict[str, Any], ...] = (),
) -> PlanCount:
    """Count the distinct plans of ``scenario`` by CP-SAT solution enumeration, up to ``cap``.

    A plan is the itinerary's decision content: the venue at every stop, the link and
    fare class, the hotel and room of every stay, and the transport mode of every leg;
    its times are the earliest schedule of those choices (see
    ``_Model._earliest_times``), so each plan is exactly one solution of the counting
    model and the enumeration counts plans, not timetables. ``exact`` is False when the
    cap (or the deterministic work limit) stopped the enumeration first; then
    ``plans`` is a lower bound.

    ``known``: plans already known to satisfy every constraint (the generator's
    reference plan). They count even when the enumeration stops before reaching them,
    so a scenario with a reference plan never reports 0 plans.
    """
    model = _Model(
        world,
        scenario,
        scenario.constraints if constraints is None else constraints,
        canonical=True,
    )
    keys = model.decisions() + [v for g in model.legs for v in g.y]
    s = _solver(limit)
    s.parameters.enumerate_all_solutions = True
    # measured: without the LP relaxation the enumeration finds plans ~1.5x faster per
    # unit of work (the LP prunes little when there is no objective)
    s.parameters.linearization_level = 0
    counter = _Counter(keys, cap)
    status = s.solve(model.m, counter)
    index = {v.index: k for k, v in enumerate(keys)}
    for plan in known:
        key = [0] * len(keys)
        for v, value in _decision_values(model, plan):
            key[index[v.index]] = value
        counter.seen.add(tuple(key))
    n = min(len(counter.seen), cap)
    return PlanCount(n, cap, status == cp_model.OPTIMAL and n < cap)


COUPLING_LIMIT = 0.02
COUPLING_GIVE_UP = 3
"""When the first this-many candidates are all unknown (neither a minimum nor a bound
>= 1 proven), the rest get only :data:`COUPLING_PROBE` units each (measured: on 4-day
trips a minimum is almost never proven, at any affordable limit, while a doomed choice
is usually proven by propagation alone)."""
COUPLING_PROBE = 0.002


def coupling(
    world: World,
    scenario: Scenario,
    *,
    kinds: frozenset[str] | None = None,
    limit: float = COUPLING_LIMIT,
    hint: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """How much one early decision decides: the scenario's coupling diagnostic.

    The decision is the venue of day 1's first attraction (the first sightseeing choice a
    planner makes; day 1 may start with lunch, and no global kind but a budget speaks of a
    restaurant). For each candidate ``v`` that the solver's frame admits there (open that
    day, not excluded, meeting rating, cuisine and booking-lead filters), with every
    constraint of another kind kept hard, CP-SAT finds the *least number of the
    scenario's global constraints* (``kinds``, default :data:`GLOBAL_KINDS`) that any
    plan starting with ``v`` must violate: ``violated[v]``. ``v`` is *dead* when even
    with every global constraint dropped no plan starts with it (a local conflict).

    Each candidate gets a deterministic budget of ``limit`` work units (presolve and
    the LP relaxation off: measured, they cost more than they save on these solves; ``hint``, the
    reference plan, starts the search near a good plan). A candidate whose minimum is
    not proven within it is *unresolved* and enters no minimum below, so every
    minimum reported is exact for the candidates it covers (a proven lower bound >= 1
    still makes it *doomed*); when the first :data:`COUPLING_GIVE_UP` candidates are
    all unknown, the rest are probed with :data:`COUPLING_PROBE` units each (a
    deterministic rule, so the bytes stay the same).

    Returns ``{"slot", "choices", "dead", "resolved", "unresolved", "fatal", "doomed",
    "max_violated", "mean_violated", "exact"}``: ``choices`` admitted candidates,
    ``resolved`` those whose minimum (or deadness) was proven, ``fatal`` resolved ones
    with ``violated >= 1`` (a plan starting there cannot be feasible), ``doomed`` those
    plus the unresolved ones whose proven lower bound is already >= 1 (doomed, by how
    much unknown), ``max_violated``
    the largest proven ``violated`` (the diagnostic's headline: how many constraints one
    early decision can break), ``exact`` whether every candidate was resolved.
    """
    from environments.worldtravel.scenario import GLOBAL_KINDS

    soft = frozenset(GLOBAL_KINDS if kinds is None else kinds)
    model = _Model(world, scenario, scenario.constraints, soft=soft)
    first = next((q for q in model.days[1] if q.slot == "attraction"), None)
    if first is None or not model.enforced:
        return {"slot": None, "choices": 0, "dead": 0, "resolved": 0, "unresolved": 0,
                "fatal": 0, "doomed": 0, "max_violated": 0, "mean_violated": 0.0,
                "exact": True}
    m = model.m
    m.minimize(sum(1 - lit for _, lit in model.enforced))
    if hint is not None:
        skip = {v.index for v in first.x}
        for v, value in _decision_values(model, hint):
            if v.index not in skip:
                m.add_hint(v, value)
    violated: list[int] = []
    dead = unresolved = bounded = 0
    probing = False
    for k, x in enumerate(first.x):
        # the first few all unknown: the rest get a short probe (a proven bound at most)
        probing = probing or unresolved - bounded == k >= COUPLING_GIVE_UP
        m.clear_assumptions()
        m.add_assumption(x)
        s = _solver(COUPLING_PROBE if probing else limit)
        s.parameters.cp_model_presolve = False
        s.parameters.linearization_level = 0  # measured: resolves more, sooner
        status = s.solve(m)
        if status == cp_model.INFEASIBLE:
            dead += 1
        elif status == cp_model.OPTIMAL:
            violated.append(int(round(s.objective_value)))
        else:
            unresolved += 1
            # the minimum is not proven, but a lower bound >= 1 proves the choice doomed
            bounded += s.best_objective_bound >= 1 - 1e-9
    fatal = sum(k >= 1 for k in violated)
    return {
        "slot": f"day {first.day} stop {first.index} ({first.slot})",
        "choices": len(first.x),
        "dead": dead,
        "resolved": len(first.x) - unresolved,
        "unresolved": unresolved,
        "fatal": fatal,
        "doomed": fatal + bounded,
        "max_violated": max(violated, default=0),
        "mean_violated": round(float(np.mean(violated)), 3) if violated else 0.0,
        "exact": unresolved == 0,
    }


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
    s2 = _solver(1.0)
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
