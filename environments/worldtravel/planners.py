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
    result = solve_model(model, limit, _solver)
    return result.plan if result.plan is not None else _fallback(world, scenario)


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


def lookahead_plan(world: World, scenario: Scenario, k: int = 1) -> Plan:
    """The cost shortcut committed stop by stop, seeing the global constraints only
    ``k`` stops ahead (see :class:`_Prefix`). Once a commitment leaves no prefix-feasible
    continuation, the rest is planned with the global constraints dropped."""
    n = sum(bool(q.x) for q in _Prefix(world, scenario, 0, drop=True).pos)
    picks: list[int] = []
    drop = False
    for step in range(n):
        found = None
        for d in [drop] if drop else [False, True]:
            found = _solve_prefix(world, scenario, min(n, step + k), d, picks, STEP_LIMIT)
            if found is not None:
                drop = d
                break
        if found is None:
            return _fallback(world, scenario)
        model, s = found
        q = [p for p in model.pos if p.x][step]
        picks.append(next(j for j, v in enumerate(q.x) if s.value(v)))
    for d in [drop] if drop else [False, True]:
        model = _Prefix(world, scenario, n, drop=d)
        for q, j in zip([q for q in model.pos if q.x], picks, strict=True):
            model.m.add(q.x[j] == 1)
        set_objective(model, "cost")
        result = solve_model(model, STEP_LIMIT, _solver)
        if result.plan is not None:
            return result.plan
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
    keys = [v for q in model.pos for v in q.x] + [v for *_, z in model.stays for v in z]
    first: Plan | None = None
    for _ in range(width):
        s = _solver(SHORTCUT_LIMIT)
        if s.solve(model.m) not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            break
        chosen = [v for v in keys if s.value(v)]
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
