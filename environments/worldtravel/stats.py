"""Summary statistics of a generated scenario set (default: the shipped seed).

    python -m environments.worldtravel.stats --json

prints one JSON object:

- the set: ``scenarios``, ``cities``, ``two_city``, ``mean_constraints``,
  ``min_constraints``, ``max_constraints``, ``kinds``, ``categories``, ``by_count``
  (scenarios per constraint count) and ``by_count_and_days`` (per count bucket, scenarios
  per trip length: count and length vary independently);
- the reference plans: ``feasible`` (scenarios with a CP-SAT plan) and ``checker_agrees``
  (those the independent checker accepts);
- ``decoy_globals`` (:func:`decoy_globals`): how many global constraints the
  generator's decoys break, by count bucket and trip length;
- coupling: ``min_global_constraints`` / ``mean_global_constraints`` (instances of
  :data:`~environments.worldtravel.scenario.GLOBAL_KINDS`), ``coupling`` (a summary of
  each scenario's diagnostic, :func:`environments.worldtravel.solver.coupling`), and the
  scripted agents' feasibility: ``greedy_feasible``, ``random_feasible``,
  ``oracle_feasible`` (fractions of the set) and ``by_bucket`` (the same per count
  bucket);
- difficulty: ``plans_found``, the distribution of the plan counts (capped); a count
  whose enumeration stopped at its work limit is a lower bound (``exact``,
  ``exact_share`` and ``exact_by_days`` say how many are exact). The coupling summary
  says the same for the diagnostic (``exact``: every first choice resolved;
  ``resolved_first_choices``).

Counting: the base constraints are one instance per trip each (every day checked by
the one instance), so ``n_constraints`` counts requirements, not days.

With the family (the default; ``--no-family`` skips it): ``family`` (each member's
feasibility, micro, TravelPlanner rates, logistic fit of feasibility) and
``difficulty_fit`` (:func:`difficulty_fit`: graded responses, the share of global / all
constraints passed, fitted on constraint count and trip length per member and pooled,
with the tested difference of the two effects).

The CLI adds ``fact_modalities``: the Webscape site's per-fact modality counts (text,
layout, image, and by medium; :func:`fact_modalities`).

Other modules add sections without touching this one: :func:`register_section` (or the
``sections`` argument of :func:`summarize`) maps a name to a function of
``(world, scenarios)`` whose value becomes that key of the output.
"""

from __future__ import annotations

import argparse
import functools
import json
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from environments.worldtravel.agents import greedy_plan, random_plan
from environments.worldtravel.analysis import (
    BUCKETS,
    PlanCounts,
    bucket,
    plan_counts,
    travelplanner_rates,
)
from environments.worldtravel.checker import check_plan
from environments.worldtravel.model import World
from environments.worldtravel.planners import PLANNERS
from environments.worldtravel.scenario import GLOBAL_KINDS, Scenario
from environments.worldtravel.store import read_scenarios, read_world

Section = Callable[[World, list[Scenario]], Any]
SECTIONS: dict[str, Section] = {}
"""Extra output sections by name (see :func:`register_section`)."""


def register_section(name: str) -> Callable[[Section], Section]:
    """Decorator: add ``fn(world, scenarios)`` to every :func:`summarize` output as ``name``."""

    def add(fn: Section) -> Section:
        SECTIONS[name] = fn
        return fn

    return add


def _share(flags: list[bool]) -> float:
    return round(sum(flags) / len(flags), 4) if flags else 0.0


def agent_feasibility(world: World, scenarios: list[Scenario]) -> dict[str, list[bool]]:
    """Per scenario: is the greedy / random / oracle (reference) plan feasible?"""
    return {
        "greedy": [check_plan(world, s, greedy_plan(world, s))["feasible"] for s in scenarios],
        "random": [check_plan(world, s, random_plan(world, s))["feasible"] for s in scenarios],
        "oracle": [
            s.reference_plan is not None and check_plan(world, s, s.reference_plan)["feasible"]
            for s in scenarios
        ],
    }


def _buckets() -> list[str]:
    return [f"{lo}-{hi}" for lo, hi in BUCKETS]


def by_count_and_days(scenarios: list[Scenario]) -> dict[str, dict[str, int]]:
    """Scenarios per (count bucket, trip length in days)."""
    table: dict[str, Counter[int]] = {}
    for s in scenarios:
        table.setdefault(bucket(s.n_constraints), Counter())[s.days] += 1
    order = _buckets()
    return {
        k: {str(d): n for d, n in sorted(table[k].items())}
        for k in sorted(table, key=lambda k: order.index(k) if k in order else len(order))
    }


def plans_distribution(scenarios: list[Scenario]) -> dict[str, Any]:
    """Distribution of ``plans_found`` (quantiles, decades, how many reached the cap)."""
    found = np.array([s.plans_found for s in scenarios], dtype=float)
    caps = {s.plan_cap for s in scenarios}
    if not len(found):
        return {}
    decades = Counter(
        "1" if n <= 1 else "2-9" if n < 10 else "10-99" if n < 100 else "100-999"
        if n < 1000 else ">=1000"
        for n in found
    )
    return {
        "cap": max(caps),
        "min": int(found.min()),
        "p25": float(np.percentile(found, 25)),
        "median": float(np.median(found)),
        "p75": float(np.percentile(found, 75)),
        "max": int(found.max()),
        "at_cap": sum(s.plans_found >= s.plan_cap for s in scenarios),
        "exact": sum(bool(s.meta.get("plans_exact")) for s in scenarios),
        "exact_share": _share([bool(s.meta.get("plans_exact")) for s in scenarios]),
        "exact_by_days": {
            str(d): sum(bool(s.meta.get("plans_exact")) for s in scenarios if s.days == d)
            for d in sorted({s.days for s in scenarios})
        },
        "decades": {k: decades[k] for k in ("1", "2-9", "10-99", "100-999", ">=1000")},
    }


def coupling_summary(scenarios: list[Scenario]) -> dict[str, Any]:
    """Summary of the per-scenario coupling diagnostics (see ``solver.coupling``)."""
    diag = [s.coupling for s in scenarios if s.coupling]
    if not diag:
        return {}
    worst = [int(d["max_violated"]) for d in diag]
    choices = sum(int(d["choices"]) for d in diag)
    return {
        "scenarios": len(diag),
        "max_violated": {str(k): n for k, n in sorted(Counter(worst).items())},
        "mean_max_violated": round(float(np.mean(worst)), 3),
        "with_a_fatal_first_choice": sum(int(d["fatal"]) > 0 for d in diag),
        "with_a_doomed_first_choice": sum(int(d.get("doomed", d["fatal"])) > 0 for d in diag),
        "doomed_share": _share([int(d.get("doomed", d["fatal"])) > 0 for d in diag]),
        "doomed_first_choices": sum(int(d.get("doomed", d["fatal"])) for d in diag),
        "first_choices": choices,
        "fatal_first_choices": sum(int(d["fatal"]) for d in diag),
        "dead_first_choices": sum(int(d["dead"]) for d in diag),
        "resolved_first_choices": sum(int(d.get("resolved", d["choices"])) for d in diag),
        "exact": sum(bool(d.get("exact")) for d in diag),
        "exact_share": _share([bool(d.get("exact")) for d in diag]),
        "exact_by_days": {
            str(days): sum(bool(s.coupling.get("exact")) for s in scenarios
                           if s.coupling and s.days == days)
            for days in sorted({s.days for s in scenarios})
        },
    }


# ----------------------------------------------------------------------------- the family
@functools.cache
def _world_at(data: str | None) -> World:
    return read_world(Path(data) if data else None)


Outcome = tuple[bool, float, PlanCounts, tuple[int, int]]
"""One member on one scenario: feasible, micro pass share, TravelPlanner counts, and
(global constraints passed, global constraints) for the graded response."""


def _family_one(args: tuple[str | None, dict[str, Any]]) -> dict[str, Outcome]:
    """Every family member's outcome on one scenario (a worker's task)."""
    data, record = args
    world, sc = _world_at(data), Scenario.from_record(record)
    out = {}
    for name, planner in PLANNERS.items():
        report = check_plan(world, sc, planner(world, sc))
        globals_ = [bool(r["passed"]) for r in report["results"] if r["kind"] in GLOBAL_KINDS]
        out[name] = (bool(report["feasible"]), report["passed"] / max(1, report["total"]),
                     plan_counts(report["delivered"], report["results"]),
                     (sum(globals_), len(globals_)))
    return out


def family_results(
    scenarios: list[Scenario], data: Path | None = None, jobs: int = 1
) -> dict[str, list[Outcome]]:
    """Per family member (:data:`~environments.worldtravel.planners.PLANNERS`), per
    scenario: (feasible, micro pass share, TravelPlanner counts). ``jobs`` worker
    processes (the plans are deterministic, so any number gives the same result)."""
    tasks = [(str(data) if data else None, s.to_record()) for s in scenarios]
    if jobs <= 1:
        rows = [_family_one(t) for t in tasks]
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            rows = list(pool.map(_family_one, tasks, chunksize=1))
    return {name: [row[name] for row in rows] for name in PLANNERS}


def _grouped(keys: list[str], flags: list[bool], order: list[str]) -> dict[str, float]:
    groups: dict[str, list[bool]] = {}
    for k, f in zip(keys, flags, strict=True):
        groups.setdefault(k, []).append(f)
    return {k: _share(groups[k]) for k in sorted(groups, key=lambda k: (
        order.index(k) if k in order else len(order), k))}


Fit = Callable[..., dict[str, dict[str, float | None]]]
"""A logistic fit of 0/1 outcomes on named predictors (the CLI hands in
:func:`harness.stats.logistic_effects`; domain code stays free of the harness)."""


def family_summary(
    scenarios: list[Scenario], results: dict[str, list[Outcome]], fit: Fit | None = None
) -> dict[str, Any]:
    """Each member's feasibility overall, per constraint-count bucket and per trip length,
    its mean micro pass share, TravelPlanner's six rates, and a standardised logistic fit
    of its feasibility on constraint count and trip length
    (``fit``: :func:`harness.stats.logistic_effects` from the CLI; no fit without one)."""
    buckets = [bucket(s.n_constraints) for s in scenarios]
    days = [str(s.days) for s in scenarios]
    out: dict[str, Any] = {}
    for name, rows in results.items():
        feasible = [f for f, *_ in rows]
        out[name] = {
            "feasible": _share(feasible),
            "n_feasible": sum(feasible),
            "micro": round(float(np.mean([m for _, m, *_ in rows])), 4) if rows else 0.0,
            "travelplanner": {k: round(v, 4) for k, v in
                              travelplanner_rates([c for _, _, c, _ in rows]).items()},
            "by_bucket": _grouped(buckets, feasible, _buckets()),
            "by_days": _grouped(days, feasible, sorted(set(days))),
            "fit": None if fit is None else _rounded(fit(
                [float(f) for f in feasible],
                {"count": [float(s.n_constraints) for s in scenarios],
                 "days": [float(s.days) for s in scenarios]},
            )),
        }
    return out


GradedFit = Callable[..., dict[str, Any]]
"""A fit of a share in [0, 1] on named predictors, with ``cluster``, ``groups`` and
``compare`` keywords (the CLI hands in :func:`harness.stats.fractional_logit_effects`)."""

RESPONSES: dict[str, str] = {
    "global": "share of the scenario's global constraints (GLOBAL_KINDS) the plan passes",
    "all": "share of all the scenario's constraints the plan passes (per-sample micro)",
}
"""The graded responses of :func:`difficulty_fit`; ``global`` is the primary one (fixed
before any fit was seen): the exact shortcuts pass every non-global constraint, so the
all-constraint share adds a count-driven ceiling (``1 - failed / n``) to it."""


def graded_responses(rows: list[Outcome]) -> dict[str, list[float]]:
    """Per scenario, each graded response of one member's outcomes (:data:`RESPONSES`)."""
    return {
        "global": [g / t if t else 1.0 for *_, (g, t) in rows],
        "all": [m for _, m, *_ in rows],
    }


def _verdict(fit: dict[str, Any]) -> dict[str, Any]:
    """Which predictor moves the share more, from the tested magnitude difference: the
    larger one only when the difference's interval excludes 0, and its direction only
    when its own interval excludes 0. ``count_larger``: the acceptance reading (the count
    lowers the share, by more than the length moves it)."""
    cmp, eff = fit.get("compare") or {}, fit["effects"]
    if cmp.get("low") is None:
        return {"larger": None, "direction": None, "count_larger": None}
    larger = "count" if cmp["low"] > 0 else "days" if cmp["high"] < 0 else "neither"
    direction = None
    if larger != "neither":
        e = eff[larger]
        direction = "lowers" if e["high"] < 0 else "raises" if e["low"] > 0 else "unclear"
    return {"larger": larger, "direction": direction,
            "count_larger": larger == "count" and direction == "lowers"}


def _graded_row(fit: dict[str, Any], shares: list[float]) -> dict[str, Any]:
    eff = {k: None if v["coef"] is None else {m: round(x, 4) if m != "p" else float(f"{x:.3g}")
                                              for m, x in v.items() if x is not None}
           for k, v in fit["effects"].items()}
    cmp = fit.get("compare") or {}
    return {
        "mean": round(float(np.mean(shares)), 4) if shares else None,
        "at_floor": sum(x == 0 for x in shares),
        "at_ceiling": sum(x == 1 for x in shares),
        "count": eff.get("count"),
        "days": eff.get("days"),
        "difference": None if cmp.get("difference") is None else {
            k: round(cmp[k], 4) if k != "p" else float(f"{cmp[k]:.3g}")
            for k in ("difference", "se", "low", "high", "p")},
        **_verdict(fit),
    }


def difficulty_fit(
    scenarios: list[Scenario], results: dict[str, list[Outcome]], fit: GradedFit
) -> dict[str, Any]:
    """Does a graded response follow the constraint count more than the trip length?

    Feasibility is at 0 for every member on the shipped set, so it cannot answer; the
    shares of :data:`RESPONSES` can. Per member and pooled over the family (one intercept
    per member, intervals clustered by scenario since the members answer the same ones):
    ``fit`` (a fractional logit) of each share on the z-scored constraint count and trip
    length, both coefficients with intervals, and the tested difference of their
    magnitudes (``difference``: ``|count| - |days|``, positive when the count moves the
    share more), read into ``larger`` / ``direction`` / ``count_larger``."""
    count = [float(s.n_constraints) for s in scenarios]
    days = [float(s.days) for s in scenarios]
    members: dict[str, Any] = {}
    pooled_y: dict[str, list[float]] = {k: [] for k in RESPONSES}
    for name, rows in results.items():
        shares = graded_responses(rows)
        members[name] = {}
        for key in RESPONSES:
            pooled_y[key] += shares[key]
            one = fit(shares[key], {"count": count, "days": days}, compare=("count", "days"))
            members[name][key] = _graded_row(one, shares[key])
    k = len(results)
    pooled = {}
    for key in RESPONSES:
        one = fit(pooled_y[key], {"count": count * k, "days": days * k},
                  cluster=[s.id for s in scenarios] * k,
                  groups=[name for name in results for _ in scenarios], compare=("count", "days"))
        pooled[key] = _graded_row(one, pooled_y[key])
    return {
        "responses": RESPONSES,
        "primary": "global",
        "model": "fractional logit (Papke-Wooldridge), z-scored predictors, sandwich 95% "
                 "intervals; pooled: one intercept per member, clustered by scenario",
        "scenarios": len(scenarios),
        "members": members,
        "pooled": pooled,
    }


def _rounded(fit: dict[str, dict[str, float | None]]) -> dict[str, dict[str, float | None]]:
    return {k: {m: None if v is None else round(v, 4) for m, v in row.items()}
            for k, row in fit.items()}


def draws_summary(scenarios: list[Scenario], fit: Fit | None = None) -> dict[str, Any]:
    """What the generator's fully built draws let through, before its last-resort
    redraws (``meta.family_draws``: per draw, the members whose plan passed): per
    member, the share of draws it passed, and a standardised logistic fit of passing on
    constraint count and trip length over all draws. The construction's own difficulty
    profile; the shipped set keeps only draws that no member passes. No fits without
    ``fit``."""
    rows = [(s.n_constraints, s.days, set(d)) for s in scenarios
            for d in s.meta.get("family_draws", [])]
    if not rows:
        return {}
    counts = [n for n, _, _ in rows]
    days = [d for _, d, _ in rows]
    out: dict[str, Any] = {"draws": len(rows)}
    pooled: list[float] = []
    for name in PLANNERS:
        passed = [float(name in p) for _, _, p in rows]
        pooled += passed
        out[name] = {
            "passed": _share([bool(x) for x in passed]),
            "by_bucket": _grouped([bucket(n) for n in counts], [bool(x) for x in passed],
                                  _buckets()),
            "by_days": _grouped([str(d) for d in days], [bool(x) for x in passed],
                                sorted({str(d) for d in days})),
            "fit": None if fit is None else _rounded(fit(
                passed, {"count": [float(n) for n in counts], "days": [float(d) for d in days]})),
        }
    out["pooled_fit"] = None if fit is None else _rounded(fit(
        pooled, {"count": [float(n) for n in counts] * len(PLANNERS),
                 "days": [float(d) for d in days] * len(PLANNERS)}))
    return out


def decoy_globals(scenarios: list[Scenario]) -> dict[str, Any]:
    """How many of each scenario's global constraints its decoys break (the generator's
    ``meta.decoys_fail``: the global-blind members' failed constraints on the kept
    draw), by constraint-count bucket and by trip length: ``n`` scenarios, ``global``
    (mean global constraints), ``broken`` (mean, over scenarios, of the decoys' mean
    number of broken global constraints) and ``share_broken`` (mean of broken/global);
    ``by_kind``: per global kind, the share of its instances the decoys break.

    Why (issue 47 item 4): the count effect depends on whether the global constraints
    that a larger count adds *bind*. ``broken`` growing with the count while
    ``share_broken`` falls says the added ones bind less often than the first few (the
    graded response, a share, then rises with the count)."""
    rows: list[tuple[str, str, int, float]] = []
    held: Counter[str] = Counter()  # instances of a kind, times the decoys that faced it
    hit: Counter[str] = Counter()
    for s in scenarios:
        fails = s.meta.get("decoys_fail") or {}
        if not fails or not s.n_global:
            continue
        for c in s.constraints:
            if c.kind in GLOBAL_KINDS:
                held[c.kind] += len(fails)
        for kinds in fails.values():
            hit.update(k for k in kinds if k in GLOBAL_KINDS)
        broken = float(np.mean([sum(k in GLOBAL_KINDS for k in kinds)
                                for kinds in fails.values()]))
        rows.append((bucket(s.n_constraints), str(s.days), s.n_global, broken))

    def grouped(at: int, order: list[str]) -> dict[str, dict[str, float]]:
        groups: dict[str, list[tuple[int, float]]] = {}
        for row in rows:
            groups.setdefault(str(row[at]), []).append((row[2], row[3]))
        return {
            k: {
                "n": len(groups[k]),
                "global": round(float(np.mean([g for g, _ in groups[k]])), 3),
                "broken": round(float(np.mean([b for _, b in groups[k]])), 3),
                "share_broken": round(float(np.mean([b / g for g, b in groups[k]])), 3),
            }
            for k in sorted(groups, key=lambda k: (order.index(k) if k in order
                                                   else len(order), k))
        }

    return {"by_bucket": grouped(0, _buckets()), "by_days": grouped(1, []),
            "by_kind": {k: round(hit[k] / held[k], 3) for k in sorted(held)}}


def redraw_summary(scenarios: list[Scenario]) -> dict[str, Any]:
    """The generator's redraws (``meta.redraws``): total, by reason, scenarios redrawn."""
    reasons: Counter[str] = Counter()
    for s in scenarios:
        reasons.update(s.meta.get("redraws", {}))
    return {
        "total": sum(reasons.values()),
        "by_reason": dict(sorted(reasons.items())),
        "scenarios_redrawn": sum(bool(s.meta.get("redraws")) for s in scenarios),
    }


def summarize(
    world: World, scenarios: list[Scenario], sections: dict[str, Section] | None = None,
    fit: Fit | None = None,
) -> dict[str, Any]:
    """The statistics dict for a world and its scenarios (plus registered sections); the
    logistic fits need ``fit`` (the CLI passes :func:`harness.stats.logistic_effects`)."""
    counts = [s.n_constraints for s in scenarios]
    globals_ = [s.n_global for s in scenarios]
    kinds = Counter(c.kind for s in scenarios for c in s.constraints)
    categories = Counter(c.category for s in scenarios for c in s.constraints)
    agents = agent_feasibility(world, scenarios)
    buckets: dict[str, list[int]] = {}
    for k, s in enumerate(scenarios):
        buckets.setdefault(bucket(s.n_constraints), []).append(k)
    order = _buckets()
    by_bucket = {
        b: {"n": len(ix), **{a: _share([agents[a][k] for k in ix]) for a in agents}}
        for b, ix in sorted(buckets.items(), key=lambda kv: order.index(kv[0])
                            if kv[0] in order else len(order))
    }
    out: dict[str, Any] = {
        "scenarios": len(scenarios),
        "cities": len(world.cities),
        "mean_constraints": round(sum(counts) / len(counts), 3) if counts else 0.0,
        "min_constraints": min(counts, default=0),
        "max_constraints": max(counts, default=0),
        "feasible": sum(s.reference_plan is not None for s in scenarios),
        "checker_agrees": sum(agents["oracle"]),
        "kinds": dict(sorted(kinds.items())),
        "categories": dict(sorted(categories.items())),
        "by_count": {str(k): v for k, v in sorted(Counter(counts).items())},
        "by_count_and_days": by_count_and_days(scenarios),
        "plans_found": plans_distribution(scenarios),
        "two_city": sum(len(s.cities) > 1 for s in scenarios),
        "min_global_constraints": min(globals_, default=0),
        "mean_global_constraints": round(float(np.mean(globals_)), 3) if globals_ else 0.0,
        "greedy_feasible": _share(agents["greedy"]),
        "random_feasible": _share(agents["random"]),
        "oracle_feasible": _share(agents["oracle"]),
        "by_bucket": by_bucket,
        "coupling": coupling_summary(scenarios),
        "redraws": redraw_summary(scenarios),
        "family_draws": draws_summary(scenarios, fit),
        "decoy_globals": decoy_globals(scenarios),
    }
    for name, fn in {**SECTIONS, **(sections or {})}.items():
        out[name] = fn(world, scenarios)
    return out


def fact_modalities(world: World, scenarios: list[Scenario]) -> dict[str, Any]:
    """Per-fact modality counts of the Webscape site rendered from ``world`` (text, layout,
    image; by medium): the CLI's ``fact_modalities`` section. Rendering takes seconds, so
    :func:`summarize` leaves it out unless asked."""
    from environments.worldtravel.site import render_world
    from environments.worldtravel.site.facts import modality_counts

    return modality_counts(render_world(world))


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON (the only format)")
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--jobs", type=int, default=1,
                        help="worker processes for the family's plans")
    parser.add_argument("--no-family", action="store_true",
                        help="skip running the planner family (seconds instead of minutes)")
    parser.add_argument("--plot", type=Path, default=None,
                        help="write the family's horizon plot (PNG) here")
    parser.add_argument("--plot-graded", type=Path, default=None,
                        help="write the family's graded horizon plot (PNG) here")
    args = parser.parse_args(argv)
    # the CLI shell hands the suite's one statistics module to the summaries (statistics
    # live in harness.stats; the domain functions above take any fitter)
    from harness.stats import fractional_logit_effects, logistic_effects

    scenarios = read_scenarios(args.data)
    sections: dict[str, Section] = {"fact_modalities": fact_modalities}
    results: dict[str, list[Outcome]] | None = None
    if not args.no_family:
        results = family_results(scenarios, args.data, args.jobs)
        sections["family"] = lambda w, s: family_summary(s, results or {}, logistic_effects)
        sections["difficulty_fit"] = lambda w, s: difficulty_fit(
            s, results or {}, fractional_logit_effects)
    stats = summarize(read_world(args.data), scenarios, sections=sections,
                      fit=logistic_effects)
    if args.plot is not None:
        from environments.worldtravel.horizon_plot import plot_family

        plot_family(scenarios, results, args.plot)
    if args.plot_graded is not None and results is not None:
        from environments.worldtravel.horizon_plot import plot_graded

        plot_graded(scenarios, results, args.plot_graded)
    print(json.dumps(stats, indent=1 if not args.json else None))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
