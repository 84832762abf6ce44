"""A FormulaCode candidate's metrics and the across-task summary, with their statistics.

The domain arithmetic (speedups, grouped advantages, the reward, the noise floor, gating,
what a resampled round means) is ``environments.formulacode.metrics``; the statistics
(per-workload p-values, bootstrap CIs over rounds, the across-task t interval) are
``harness.stats``. Environments may not import harness, so the two meet here, in the
benchmark layer, for the scorer and for ``validate``.

Significance (per workload, over the interleaved rounds): the per-round log-ratios
``d_r = ln(T_base,r / T_x,r)`` get a paired test: a one-sample t test on ``d`` (``t``, the
default), an exact sign-flip permutation test (``signflip``; needs >= 6 rounds to reach
p < 0.05), or Mann-Whitney U on the raw samples of the two trees (``mannwhitney``, as
SWE-Perf). Each task's advantage gets a bootstrap CI over rounds (rounds resampled with
replacement; under the t test each replicate re-tests which speedups count, so the CI also
carries that decision's noise; under the other tests the full data's decision is held
fixed) and is also reported in ratio form,
``G(a) / G(o)`` (1.0 = as fast as the expert). Across tasks advantages are averaged
arithmetically and speedups geometrically (spec §7.3); infra failures are excluded and
counted, as the paper does.

A ``cycles`` run (callgrind-simulated cycles, ``result["timer"] == "cycles"``) is exact:
the same code in the same layout measures the same count in every process, whatever the
load, up to a few hundredths of a percent, so there is no sampling noise to test against.
Its speedups count when they lie outside the noise floor (the run's base-vs-base copies,
at least ``fcm.CYCLES_FLOOR``), its p-values are 0 (outside) or 1 (inside), and its
intervals are error bounds, not bootstrap CIs (:func:`exact_intervals`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from environments.formulacode import metrics as fcm
from harness import stats

TESTS = ("t", "signflip", "mannwhitney")
BOOTSTRAP = 1000


def workload_p(base: Mapping[str, Any], other: Mapping[str, Any], wl: str,
               test: str = "t") -> float:
    """p-value of "``other`` times ``wl`` like ``base``" under ``test``."""
    if test == "t":
        return stats.one_sample_t_p(fcm.log_ratios(base, other, wl))
    if test == "signflip":
        return stats.sign_flip_p(fcm.log_ratios(base, other, wl))
    if test == "mannwhitney":
        samples = (base.get("samples") or {}).get(wl) or [], \
            (other.get("samples") or {}).get(wl) or []
        return stats.mann_whitney_p(*samples)
    raise ValueError(f"unknown test {test!r}: one of {TESTS}")


def advantage_cis(result: Mapping[str, Any], candidate: str, a_keep: Mapping[str, bool],
                  o_keep: Mapping[str, bool], gated: bool, higher: Sequence[str] = (),
                  draws: int = BOOTSTRAP, level: float = 0.95, seed: int = 0,
                  test: str = "t", floor: float = 0.0,
                  alpha: float = fcm.ALPHA) -> dict[str, list[float]]:
    """95% percentile CIs over rounds of the overall advantage, its ratio form and the raw
    speedup G(a) (``[nan, nan]`` with fewer than two rounds or no workload). Under the t
    test every replicate re-tests significance against ``floor`` at ``alpha``; the rank and
    permutation tests have no vectorised form here, so their masks stay fixed."""
    retest = (lambda d: stats.one_sample_t_p_array(d, axis=1)) if test == "t" else None
    resample = fcm.RoundResample(result, candidate, a_keep, o_keep, gated, higher,
                                 retest=retest, floor=floor, alpha=alpha)
    if not resample.usable:
        return {k: [math.nan, math.nan] for k in fcm.RoundResample.KEYS}
    cis = stats.bootstrap_rows_ci(
        resample.rounds, {k: resample.statistic(k) for k in fcm.RoundResample.KEYS},
        n_boot=draws, level=level, seed=seed)
    return {k: list(v) for k, v in cis.items()}


def exact_intervals(result: Mapping[str, Any], candidate: str, a_eff: Mapping[str, float],
                    o_eff: Mapping[str, float], g: float) -> dict[str, list[float]]:
    """Intervals of a cycles run: each log speedup is known to ``e``, the 95th percentile
    over workloads of ``|ln(T_base / T_copy)|`` between the baseline and its fresh-process
    copies (``control``, ``noop``; not ``candidate``), so the speedup lies in
    ``g e^{+-e}``, the ratio form in ``r e^{+-2e}`` and the advantage between the extremes
    of ``G(a) e^{+-e} - G(o) e^{-+e}``. Without a copy, ``e = 0`` (point values)."""
    e, source = fcm.noise_floor(result, exclude=(candidate,))
    e = 0.0 if source == "default" else e
    ga = fcm.geomean(a_eff.values()) if a_eff else 1.0
    go = fcm.geomean(o_eff.values()) if o_eff else 1.0
    up, down = math.exp(e), math.exp(-e)
    return {"advantage": [ga * down - go * up, ga * up - go * down],
            "advantage_ratio": [ga / go * down * down, ga / go * up * up],
            "speedup": [g * down, g * up]}


def evaluate(result: Mapping[str, Any], candidate: str, test: str = "t",
             alpha: float = fcm.ALPHA, floor: float | None = None) -> dict[str, Any]:
    """Every metric of one candidate (spec §5.5, §7, §8) as a flat dict.

    ``advantage_<level>`` (the headline) counts only significant speedups outside the
    noise floor (``floor``: calibrated from the run's base-vs-base copies when None);
    ``advantage_raw_<level>`` is the paper's plain difference, ``advantage_ratio_<level>``
    the ratio form, ``advantage_ci`` / ``advantage_ratio_ci`` / ``speedup_ci`` bootstrap
    CIs over rounds, ``speedup_significant`` whether the task's speedup G(a) is real
    (its CI excludes 1 and it lies outside the floor)."""
    levels = fcm.LEVELS
    out: dict[str, Any] = {"candidate": candidate, "infra_failure": False, "gated": False,
                           "failure": None}
    problem = fcm.infra_problem(result)
    trees = result.get("trees") or {}
    tree = trees.get(candidate)
    if problem is None and tree is None:
        problem = f"no tree for candidate {candidate!r}"
    if problem is not None:
        out.update(infra_failure=True, failure=f"infra: {problem}", success=False,
                   speedup=1.0, reward=0.0, num_valid_benchmarks=0,
                   total_benchmarks=len(result.get("workloads") or []),
                   **{f"advantage_{lv}": 0.0 for lv in levels})
        return out
    assert tree is not None
    base, expert = fcm.medians(trees["baseline"]), fcm.medians(trees["expert"])
    if not tree["apply"]["ok"]:
        out["failure"] = "patch does not apply"
    elif fcm.failed_tests(tree.get("tests")) > fcm.failed_tests(trees["expert"].get("tests")):
        out["failure"] = "tests failed"
    elif (tree.get("snapshot") or {}).get("status") != "passed":
        out["failure"] = "snapshot mismatch"
    out["gated"] = gated = out["failure"] is not None
    higher = [wl for wl, m in (result.get("workload_meta") or {}).items()
              if (m or {}).get("higher_is_better")]
    agent = dict(base) if gated else fcm.medians(tree)
    a, o = fcm.speedups(base, expert, agent, higher)
    if gated:
        a = dict.fromkeys(o, 1.0)
    exact = result.get("timer") == "cycles"
    if floor is None:
        floor, floor_source = fcm.noise_floor(result, exclude=(candidate,))
        if exact and (floor_source == "default" or floor < fcm.CYCLES_FLOOR):
            floor, floor_source = fcm.CYCLES_FLOOR, f"cycles minimum ({floor_source})"
    else:
        floor_source = "given"
    if exact:  # deterministic: outside the floor is the whole test
        p_o = {wl: 0.0 if abs(math.log(v)) > floor else 1.0 for wl, v in o.items()}
        p_a = {wl: 0.0 if not gated and abs(math.log(v)) > floor else 1.0
               for wl, v in a.items()}
    else:
        p_o = {wl: workload_p(trees["baseline"], trees["expert"], wl, test) for wl in o}
        p_a = ({wl: 1.0 for wl in a} if gated else
               {wl: workload_p(trees["baseline"], tree, wl, test) for wl in a})
    a_eff, o_eff = fcm.counted(a, p_a, floor, alpha), fcm.counted(o, p_o, floor, alpha)
    advs, raw = fcm.level_advantages(a_eff, o_eff), fcm.level_advantages(a, o)
    ratios = fcm.ratio_advantages(a_eff, o_eff)
    g = fcm.geomean(a.values()) if a else math.nan
    if exact:
        ci = exact_intervals(result, candidate, a_eff, o_eff, g)
    else:
        ci = advantage_cis(result, candidate, {w: a_eff[w] != 1.0 for w in a},
                           {w: o_eff[w] != 1.0 for w in o}, gated, higher,
                           test=test, floor=floor, alpha=alpha)
    lo, hi = ci["speedup"]
    cvs = fcm.workload_cvs(tree)
    out.update(
        success=not gated,
        speedup=g if math.isfinite(g) else 1.0,
        expert_speedup=fcm.geomean(o.values()) if o else 1.0,
        max_speedup=max(a.values()) if a else 1.0,
        reward=fcm.reward(g if a else 0.0, gated),
        num_valid_benchmarks=len(a),
        total_benchmarks=len(result.get("workloads") or []),
        tests=tree.get("tests"),
        snapshot=tree.get("snapshot"),
        cv=statistics.median(cvs.values()) if cvs else math.nan,
        dispersion=fcm.round_cv(tree),
        workload_cv=cvs,
        workload_speedups=a,
        workload_p=p_a,
        expert_workload_p=p_o,
        significant_workloads=sum(1 for w in a if a_eff[w] != 1.0),
        expert_significant_workloads=sum(1 for w in o if o_eff[w] != 1.0),
        test="exact" if exact else test, alpha=alpha, noise_floor=floor,
        noise_floor_source=floor_source, measure="cycles" if exact else result.get("timer"),
        speedup_ci=ci["speedup"],
        speedup_significant=bool(math.isfinite(g) and not gated and abs(math.log(g)) > floor
                                 and (lo > 1.0 or hi < 1.0)),
        advantage_ci=ci["advantage"],
        advantage_ratio_ci=ci["advantage_ratio"],
        **{f"advantage_{lv}": advs[lv] for lv in levels},
        **{f"advantage_raw_{lv}": raw[lv] for lv in levels},
        **{f"advantage_ratio_{lv}": ratios[lv] for lv in levels},
    )
    return out


def aggregate(rows: Sequence[Mapping[str, Any]], level: float = 0.95) -> dict[str, float]:
    """Across tasks (spec §7.3 resolution): mean advantage per level (and its raw form),
    a t interval on the mean overall advantage (``harness.stats.mean_ci``), the geometric
    mean of the ratio-form advantage, geometric and arithmetic mean speedup, success rate.
    Infra failures are excluded from all of these and counted (``infra_failures``,
    ``infra_failure_rate``; the Inspect scorer applies the same rule through NaN scores)."""
    rated = [r for r in rows if not r.get("infra_failure")]
    out: dict[str, float] = {
        "tasks": float(len(rows)),
        "tasks_rated": float(len(rated)),
        "infra_failures": float(len(rows) - len(rated)),
        "infra_failure_rate": (len(rows) - len(rated)) / len(rows) if rows else 0.0,
    }
    if not rated:
        return out
    for lv in fcm.LEVELS:
        out[f"advantage_{lv}"] = statistics.mean(float(r[f"advantage_{lv}"]) for r in rated)
    raw = [float(r.get("advantage_raw_overall", r["advantage_overall"])) for r in rated]
    out["advantage_raw_overall"] = statistics.mean(raw)
    ratios = [float(r["advantage_ratio_overall"]) for r in rated
              if r.get("advantage_ratio_overall") is not None]
    if ratios:
        out["advantage_ratio_geomean"] = fcm.geomean(ratios)
    advs = [float(r["advantage_overall"]) for r in rated]
    if len(advs) >= 2:
        est = stats.mean_ci(advs, level=level)
        out["advantage_overall_ci_low"] = est.lo
        out["advantage_overall_ci_high"] = est.hi
    out["speedup_geomean"] = fcm.geomean(float(r["speedup"]) for r in rated)
    out["speedup_mean"] = statistics.mean(float(r["speedup"]) for r in rated)
    out["success_rate"] = statistics.mean(1.0 if r["success"] else 0.0 for r in rated)
    return out
