"""A family of reference planners, each exploiting one structural shortcut.

Why a family: a generator filtered against one planner is hard for that planner only.
Each member here is a shortcut a capable model could find, and the scenario set is
built so that every one of them fails (``harness worldtravel stats --json`` reports
each member's feasibility overall, per constraint-count bucket and per trip length):

- ``greedy``: stop by stop, local constraints only (:func:`agents.greedy_plan`).
- ``shortcut-cost`` / ``shortcut-time`` / ``shortcut-slack``: *exact* satisfaction of
  every constraint that is not global (CP-SAT on the scenario without its
  :data:`~environments.worldtravel.scenario.GLOBAL_KINDS` instances), minimising cost,
  travel minutes, or committed minutes (the most free time).
- ``lookahead-1`` / ``lookahead-3``: the cost shortcut, committed one stop at a time,
  each commitment solved so that no global constraint is *visibly broken* within the
  next k stops (:class:`_Prefix`); what the global constraints still require beyond
  that (a sight still owed, a count still to reach) it does not plan for. A plan whose
  commitments left no such continuation is finished with the globals dropped. (A
  lookahead that also planned the obligations once its horizon reached the trip's end
  would be the oracle on every trip shorter than k stops.)
- ``beam``: the cheapest shortcut plans in cost order (a beam of
  :data:`BEAM_WIDTH`, each next one excluded by a no-good cut on its choices), keeping
  the first that passes a sample of the global constraints (every other one, in
  scenario order); none passing, the cheapest.

Every solve is single-threaded with a deterministic work limit, so each plan is the
same on any machine. Pure domain code (no Inspect).
"""

from __future__ import annotations

import copy
import json
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ortools.sat.python import cp_model

from environments.worldtravel.agents import greedy_plan
from environments.worldtravel.checker import check_plan
from environments.worldtravel.model import MODES, Attraction, Restaurant, World
from environments.worldtravel.scenario import GLOBAL_KINDS, Constraint, Scenario
from environments.worldtravel.solver import (
    _Model,
    _Pos,
    set_objective,
    solve_model,
)
from environments.worldtravel.solver import (
    _solver as _base_solver,
)

Plan = dict[str, Any]
Planner = Callable[[World, Scenario], Plan]

SHORTCUT_LIMIT = 0.05
"""Deterministic work units per shortcut solve: the best plan found within it (most
1- and 2-day scenarios solve to optimality; 4-day ones stop at a good plan). Small, so
the generator can afford the global-blind plans of every scenario it draws."""
STEP_LIMIT = 0.02
"""Work units per lookahead commitment (one solve per stop)."""
BEAM_WIDTH = 6


def _solver(limit: float) -> cp_model.CpSolver:
    """The oracle's deterministic solver without the LP relaxation (measured: good plans
    sooner per unit of work on these models when the limit is this small)."""
    s = _base_solver(limit)
    s.parameters.linearization_level = 0
    return s


# ------------------------------------------------------------------------- repeated solves
class _Memo:
    """Outcomes of solves that members of the family repeat on the same scenario.

    Why: the beam's first solve is the cost shortcut's solve (same model, objective,
    limit and solver settings), and the two lookaheads solve the same prefix model
    once their horizons reach the trip's end with the same commitments so far. Each
    solve is deterministic, so its outcome is reused rather than recomputed; the key
    holds the scenario's whole content (frame and every constraint) and a reference to
    the world, so a hit is the outcome a fresh solve would give. Values are small
    (a pick, a plan, the chosen literals), and only the last :attr:`SIZE` are kept."""

    SIZE = 256
    MISSING = object()

    def __init__(self) -> None:
        self._items: OrderedDict[tuple[Any, ...], tuple[World, Any]] = OrderedDict()

    def get(self, world: World, key: tuple[Any, ...]) -> Any:
        hit = self._items.get(key)
        if hit is None or hit[0] is not world:
            return self.MISSING
        self._items.move_to_end(key)
        return hit[1]

    def put(self, world: World, key: tuple[Any, ...], value: Any) -> None:
        self._items[key] = (world, value)
        self._items.move_to_end(key)
        while len(self._items) > self.SIZE:
            self._items.popitem(last=False)

    def clear(self) -> None:
        self._items.clear()


_memo = _Memo()


def _content(
    world: World, scenario: Scenario, constraints: list[Constraint] | None = None
) -> tuple[Any, ...]:
    """The key of everything a model of ``scenario`` (under ``constraints``, default its
    own) reads, with the world's identity."""
    cons = scenario.constraints if constraints is None else constraints
    text = json.dumps(
        [
            scenario.id, scenario.family, scenario.cities, scenario.start_date, scenario.days,
            scenario.party, scenario.arrival, scenario.departure, scenario.transfer_day,
            scenario.skeleton, [(c.id, c.kind, c.params) for c in cons],
        ],
        sort_keys=True,
        default=str,
    )
    return (id(world), text)


def local_constraints(scenario: Scenario) -> list[Constraint]:
    """The scenario's constraints that are not global (what a shortcut planner keeps)."""
    return [c for c in scenario.constraints if c.kind not in GLOBAL_KINDS]


def _fallback(world: World, scenario: Scenario) -> Plan:
    """The greedy plan: what a planner submits when its own solve finds nothing."""
    return greedy_plan(world, scenario)


def shortcut_plan(
    world: World, scenario: Scenario, objective: str = "cost", limit: float = SHORTCUT_LIMIT
) -> Plan:
    """The best plan under every non-global constraint for ``objective`` (``cost``,
    ``time`` or ``slack``; see :data:`~environments.worldtravel.solver.OBJECTIVES`)."""
    model = _Model(world, scenario, local_constraints(scenario))
    set_objective(model, objective)
    solvers: list[cp_model.CpSolver] = []

    def make(lim: float) -> cp_model.CpSolver:
        solvers.append(_solver(lim))
        return solvers[-1]

    result = solve_model(model, limit, make)
    if objective == "cost" and limit == SHORTCUT_LIMIT:  # the beam's first solve
        chosen = _chosen(model, solvers[0]) if result.feasible else None
        key = ("cheapest", _content(world, scenario, model.cons))
        _memo.put(world, key, chosen)
    return result.plan if result.plan is not None else _fallback(world, scenario)


def _keys(model: _Model) -> list[Any]:
    """The choice literals the beam's no-good cuts speak of (venues, links, rooms)."""
    return [v for q in model.pos for v in q.x] + [v for *_, z in model.stays for v in z]


def _chosen(model: _Model, s: cp_model.CpSolver) -> tuple[bool, ...]:
    """Which of :func:`_keys` a solution sets."""
    return tuple(bool(s.value(v)) for v in _keys(model))


# ------------------------------------------------------------------------- lookahead
class _Prefix(_Model):
    """The scenario's model with each global constraint stated only as the *violations*
    the first ``upto`` decision positions (venues and links, in trip order) can show:
    budgets and at-most counts on the visible prefix's spending and visits (lodging
    once its first night is visible; leg fares not), ``then`` seen only after
    ``first``, not both sides of an either-or, the if-then on visible days. What a
    global constraint still *requires* (visit both, visit one, reach the count, the leg
    fares) is never stated: that is this planner's blind spot.

    Each statement is implied by the full constraint (a necessary condition), so a
    prefix-infeasible commitment is truly doomed. ``drop`` leaves the globals out.
    """

    def __init__(
        self, world: World, scenario: Scenario, upto: int, *, drop: bool = False
    ) -> None:
        self.upto, self.drop = upto, drop
        super().__init__(world, scenario, scenario.constraints)

    # which positions are visible
    def _order(self) -> list[_Pos]:
        return [q for q in self.pos if q.x]

    def _visible(self) -> list[_Pos]:
        return self._order()[: self.upto]

    def _attr(self, qs: list[_Pos], pred: Callable[[Attraction], bool]) -> list[Any]:
        return [
            v
            for q in qs
            if q.slot == "attraction"
            for rec, v in zip(q.cands, q.x, strict=True)
            if pred(rec)
        ]

    def _prefix_cost(self, category: str | None) -> Any:
        party = self.sc.party
        total: Any = 0
        seen = self._visible()
        for q in seen:
            for rec, v in zip(q.cands, q.x, strict=True):
                if isinstance(rec, Restaurant):
                    cat, price = "food", rec.price * party
                elif isinstance(rec, Attraction):
                    cat, price = "activities", rec.price * party
                else:
                    link, cls = rec
                    cat, price = "transport", link.prices[cls] * party
                if category in (None, cat):
                    total += price * v
        last_day = max((q.day for q in seen), default=0)
        if category in (None, "lodging"):
            for _, nights, opts, z in self.stays:
                if nights[0] <= last_day:
                    for (h, room), v in zip(opts, z, strict=True):
                        price = sum(
                            h.prices[room][self.w.date_index(self.sc.date(n))] for n in nights
                        )
                        total += price * v
        return total

    def _c_budget_total(self, p: dict[str, Any]) -> None:
        if not self.drop:
            self._add(self._prefix_cost(None) <= int(p["amount"]))
        return None

    def _c_budget_category(self, p: dict[str, Any]) -> None:
        if not self.drop:
            self._add(self._prefix_cost(p["category"]) <= int(p["amount"]))
        return None

    def _c_count(self, p: dict[str, Any]) -> None:
        if self.drop:
            return None
        if p["op"] == "at_most":  # an at-least count is an obligation: not seen
            seen = self._attr(self._visible(), lambda r: r.category == p["category"])
            self._add(sum(seen) <= int(p["n"]))
        return None

    def _c_all_different(self, p: dict[str, Any]) -> None:
        if self.drop:
            return None
        want = ("attraction",) if p["target"] == "attraction" else ("lunch", "dinner")
        groups: dict[str, list[Any]] = {}
        for q in self._visible():
            if q.slot in want:
                for rec, v in zip(q.cands, q.x, strict=True):
                    groups.setdefault(rec.id, []).append(v)
        for lits in groups.values():
            if len(lits) > 1:
                self._add(sum(lits) <= 1)
        return None

    def _c_precedence(self, p: dict[str, Any]) -> None:
        if self.drop:
            return None
        seen = self._visible()
        for k, q in enumerate(seen):  # ``then`` seen only after ``first``
            thens = self._attr([q], lambda r: r.id == p["then"])
            firsts = self._attr(seen[:k], lambda r: r.id == p["first"])
            for lit in thens:
                self._add_or([lit.Not(), *firsts])
        return None

    def _c_either_or(self, p: dict[str, Any]) -> None:
        if self.drop:
            return None
        seen = self._visible()
        a = self._any(self._attr(seen, lambda r: r.id == p["a"]))
        b = self._any(self._attr(seen, lambda r: r.id == p["b"]))
        self._add(a + b <= 1)
        return None

    def _c_if_then(self, p: dict[str, Any]) -> None:
        if self.drop:
            return None
        d = int(p["day"])
        if all(q.day != d for q in self._visible()):
            return None
        seen = self._attr([q for q in self._visible() if q.day == d],
                          lambda r: r.category == p["category"])
        flag = self._any(seen)
        k = MODES.index(p["forbid_mode"])
        for g in self.legs:
            if g.day == d:
                self.m.add(g.y[k] == 0).only_enforce_if([flag, *self._enf])
        return None


def _solve_prefix(
    world: World, scenario: Scenario, upto: int, drop: bool, picks: list[int], limit: float
) -> tuple[_Prefix, Any] | None:
    """The cost-optimal solution of the prefix model with ``picks`` committed (None when
    none is found within the limit)."""
    model = _Prefix(world, scenario, upto, drop=drop)
    for q, k in zip([q for q in model.pos if q.x], picks, strict=False):
        model.m.add(q.x[k] == 1)
    set_objective(model, "cost")
    s = _solver(limit)
    if s.solve(model.m) not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    return model, s


def _next_pick(
    world: World, scenario: Scenario, upto: int, drop: bool, picks: list[int]
) -> int | None:
    """The candidate the prefix model's solution takes at the next position (None when
    no solution is found within :data:`STEP_LIMIT`)."""
    found = _solve_prefix(world, scenario, upto, drop, picks, STEP_LIMIT)
    if found is None:
        return None
    model, s = found
    q = [p for p in model.pos if p.x][len(picks)]
    return next(j for j, v in enumerate(q.x) if s.value(v))


def _finish(world: World, scenario: Scenario, n: int, drop: bool, picks: list[int]) -> Plan | None:
    """The plan of the committed ``picks`` (times, modes and rooms solved for cost)."""
    model = _Prefix(world, scenario, n, drop=drop)
    for q, j in zip([q for q in model.pos if q.x], picks, strict=True):
        model.m.add(q.x[j] == 1)
    set_objective(model, "cost")
    return solve_model(model, STEP_LIMIT, _solver).plan


def lookahead_plan(world: World, scenario: Scenario, k: int = 1) -> Plan:
    """The cost shortcut committed stop by stop, seeing the global constraints only
    ``k`` stops ahead (see :class:`_Prefix`). Once a commitment leaves no prefix-feasible
    continuation, the rest is planned with the global constraints dropped.

    Each commitment's solve depends on (horizon, drop, commitments so far) only, so a
    solve another lookahead already made (the horizon clamps at the trip's end) is
    read from :data:`_memo`."""
    n = sum(bool(q.x) for q in _Prefix(world, scenario, 0, drop=True).pos)
    content = _content(world, scenario)
    picks: list[int] = []
    drop = False
    for step in range(n):
        found = None
        for d in [drop] if drop else [False, True]:
            upto = min(n, step + k)
            # with the globals dropped the horizon states nothing: one model for all
            key = ("step", content, None if d else upto, d, tuple(picks))
            found = _memo.get(world, key)
            if found is _Memo.MISSING:
                found = _next_pick(world, scenario, upto, d, picks)
                _memo.put(world, key, found)
            if found is not None:
                drop = d
                break
        if found is None:
            return _fallback(world, scenario)
        picks.append(found)
    for d in [drop] if drop else [False, True]:
        key = ("finish", content, n, d, tuple(picks))
        plan = _memo.get(world, key)
        if plan is _Memo.MISSING:
            plan = _finish(world, scenario, n, d, picks)
            _memo.put(world, key, plan)
        if plan is not None:
            return copy.deepcopy(plan)
    return _fallback(world, scenario)


# ------------------------------------------------------------------------- beam
def sampled_globals(scenario: Scenario) -> list[Constraint]:
    """The global constraints the beam planner checks: every other one, in order."""
    return [c for c in scenario.constraints if c.kind in GLOBAL_KINDS][::2]


def beam_plan(world: World, scenario: Scenario, width: int = BEAM_WIDTH) -> Plan:
    """The first of the ``width`` cheapest shortcut plans that passes the sampled global
    constraints (:func:`sampled_globals`); none passing, the cheapest."""
    local = local_constraints(scenario)
    probe = Scenario(**{**scenario.__dict__, "constraints": sampled_globals(scenario)})
    model = _Model(world, scenario, local)
    set_objective(model, "cost")
    keys = _keys(model)
    first: Plan | None = None
    # the first solve is the cost shortcut's (read from the memo when it was made)
    cheapest = _memo.get(world, ("cheapest", _content(world, scenario, local)))
    for step in range(width):
        if step > 0 or cheapest is _Memo.MISSING:
            s = _solver(SHORTCUT_LIMIT)
            ok = s.solve(model.m) in (cp_model.OPTIMAL, cp_model.FEASIBLE)
            cheapest = _chosen(model, s) if ok else None
        if cheapest is None:
            break
        chosen = [v for v, on in zip(keys, cheapest, strict=True) if on]
        result = solve_model(_pinned(world, scenario, local, model, chosen), STEP_LIMIT, _solver)
        if result.plan is not None:
            first = first or result.plan
            if check_plan(world, probe, result.plan)["feasible"]:
                return result.plan
        model.m.add_bool_or([v.Not() for v in chosen])  # the next cheapest
    return first if first is not None else _fallback(world, scenario)


def _pinned(
    world: World, scenario: Scenario, local: list[Constraint], model: _Model, chosen: list[Any]
) -> _Model:
    """A fresh model of ``local`` with the choices of ``chosen`` (literals of ``model``)
    fixed, so the plan is read without the accumulated no-good cuts."""
    pinned = _Model(world, scenario, local)
    index = {v.index for v in chosen}
    old = [v for q in model.pos for v in q.x] + [v for *_, z in model.stays for v in z]
    new = [v for q in pinned.pos for v in q.x] + [v for *_, z in pinned.stays for v in z]
    for a, b in zip(old, new, strict=True):
        if a.index in index:
            pinned.m.add(b == 1)
    set_objective(pinned, "cost")
    return pinned


PLANNERS: dict[str, Planner] = {
    "greedy": greedy_plan,
    "shortcut-cost": lambda w, s: shortcut_plan(w, s, "cost"),
    "shortcut-time": lambda w, s: shortcut_plan(w, s, "time"),
    "shortcut-slack": lambda w, s: shortcut_plan(w, s, "slack"),
    "lookahead-1": lambda w, s: lookahead_plan(w, s, 1),
    "lookahead-3": lambda w, s: lookahead_plan(w, s, 3),
    "beam": beam_plan,
}
"""The family by name (each a deterministic function of world and scenario)."""

GLOBAL_BLIND: tuple[str, ...] = ("greedy", "shortcut-cost", "shortcut-time", "shortcut-slack")
"""Members whose plan does not depend on the global constraints: the generator computes
them before choosing the globals (its *decoys*) and picks globals that break each."""


def decoy_plans(world: World, scenario: Scenario) -> dict[str, Plan]:
    """The global-blind members' plans of ``scenario`` (its global constraints ignored)."""
    return {name: PLANNERS[name](world, scenario) for name in GLOBAL_BLIND}
