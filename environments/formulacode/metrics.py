"""FormulaCode metrics (spec §7-8), computed on the host from the grader's raw timings.

Per workload i: agent speedup ``a_i = T_base,i / T_agent,i`` and expert speedup
``o_i = T_base,i / T_expert,i``, each T the median of every timing sample of that workload
over all rounds. Within a task, workloads are grouped by granularity (module, class,
function = parameterisations pooled, overall); a group's advantage is
``G(a) - G(o)`` with G the geometric mean, a level's advantage the arithmetic mean over its
groups. The headline is the overall level. Across tasks advantages are averaged
arithmetically and speedups geometrically (§7.3 resolution). Levels are named by
granularity, never by number (§7.4).

A candidate that fails the correctness gate (tests relative to the expert, or a snapshot
pass->fail) is reverted to the baseline: every ``a_i = 1`` and the reward is -1. Problems
of the harness or the task (no benchmarks, baseline or expert not measurable) are *infra*
failures and are kept apart from agent failures: excluded from every mean and counted
(``infra_failures`` in :func:`aggregate`, as the paper does).

Significance (per workload, over the interleaved rounds): the per-round log-ratios
``d_r = ln(T_base,r / T_x,r)`` get a paired test — a one-sample t-test on ``d`` (default),
an exact sign-flip permutation test (``signflip``; needs >= 6 rounds to reach p < 0.05),
or Mann-Whitney U on the raw samples of the two trees (``mannwhitney``, as SWE-Perf).
A speedup counts only when it is significant at ``alpha`` *and* outside the noise floor
``|ln s| > floor``; otherwise it is 1.0 for the advantage (agent and expert alike). The
floor is calibrated from base-vs-base measurements in the same run (the ``control`` tree,
or a ``noop`` candidate): the 95th percentile over workloads of ``|ln(T_base / T_copy)|``.
Each task's advantage gets a bootstrap CI over rounds (rounds resampled with replacement,
workload times the median of the resampled round medians, the significance mask held
fixed) and is also reported in ratio form, ``G(a) / G(o)`` (1.0 = as fast as the expert).
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

LEVELS = ("module", "class", "function", "overall")
REWARD_FLOOR_LN = math.log(1.08)
ALPHA = 0.05
TESTS = ("t", "signflip", "mannwhitney")
DEFAULT_NOISE_FLOOR = math.log(1.02)  # used only when the run has no base-vs-base control
CONTROLS = ("control", "noop")
BOOTSTRAP = 1000


def geomean(values: Iterable[float]) -> float:
    """exp(mean(ln x)) over positive finite values; nan when there are none."""
    logs = [math.log(v) for v in values if v > 0 and math.isfinite(v)]
    return math.exp(sum(logs) / len(logs)) if logs else math.nan


def decompose(name: str) -> tuple[str | None, str | None, str]:
    """(module, class, function) of a workload name, parameters stripped (spec §7.2)."""
    base = re.sub(r"\(.*\)$", "", name)
    parts = base.split(".")
    if len(parts) == 1:
        return None, None, parts[0]
    if len(parts) >= 3 and parts[-2][:1].isupper():
        return ".".join(parts[:-2]), parts[-2], parts[-1]
    return ".".join(parts[:-1]), None, parts[-1]


def medians(tree: Mapping[str, Any]) -> dict[str, float]:
    """Per-workload median of all raw samples of one tree."""
    return {wl: statistics.median(v) for wl, v in (tree.get("samples") or {}).items() if v}


def _valid(x: float | None) -> bool:
    return x is not None and math.isfinite(x) and x > 0


def speedups(
    base: Mapping[str, float], expert: Mapping[str, float], agent: Mapping[str, float],
    higher_is_better: Iterable[str] = (),
) -> tuple[dict[str, float], dict[str, float]]:
    """(a_i, o_i) over the workloads valid in all three trees (spec §7.1); a ``track_``
    workload declared higher-is-better has its ratio inverted."""
    a: dict[str, float] = {}
    o: dict[str, float] = {}
    higher = set(higher_is_better)
    for wl, tb in base.items():
        te, ta = expert.get(wl), agent.get(wl)
        if not (_valid(tb) and _valid(te) and _valid(ta)):
            continue
        ai, oi = tb / ta, tb / te  # type: ignore[operator]
        if wl in higher:
            ai, oi = 1 / ai, 1 / oi
        if _valid(ai) and _valid(oi):
            a[wl], o[wl] = ai, oi
    return a, o


def level_advantages(a: Mapping[str, float], o: Mapping[str, float]) -> dict[str, float]:
    """Advantage at each granularity: mean over groups of G(a_g) - G(o_g)."""
    out: dict[str, float] = {}
    for level in LEVELS:
        groups: dict[tuple[Any, ...], list[str]] = {}
        for wl in a:
            mod, cls, func = decompose(wl)
            key = {"module": (mod,), "class": (mod, cls), "function": (mod, cls, func),
                   "overall": ()}[level]
            groups.setdefault(key, []).append(wl)
        advs = [geomean(a[w] for w in g) - geomean(o[w] for w in g) for g in groups.values()]
        out[level] = sum(advs) / len(advs) if advs else 0.0
    return out


def ratio_advantages(a: Mapping[str, float], o: Mapping[str, float]) -> dict[str, float]:
    """The advantage in ratio form at each granularity: geometric mean over groups of
    ``G(a_g) / G(o_g)`` (1.0 = parity with the expert; overall = ``G(a) / G(o)``)."""
    out: dict[str, float] = {}
    for level in LEVELS:
        groups: dict[tuple[Any, ...], list[str]] = {}
        for wl in a:
            mod, cls, func = decompose(wl)
            key = {"module": (mod,), "class": (mod, cls), "function": (mod, cls, func),
                   "overall": ()}[level]
            groups.setdefault(key, []).append(wl)
        ratios = [geomean(a[w] for w in g) / geomean(o[w] for w in g) for g in groups.values()]
        out[level] = geomean(ratios) if ratios else 1.0
    return out


def reward(g: float, gated: bool, oracle_run: bool = False, h: float = 1.0) -> float:
    """The RL-style reward of spec §8 (-1 when gated; 0.25 + 0.75 g up to g = 1; then up to
    6 on a log scale where ln 1.08 — or the expert's ln h if larger — is one unit)."""
    if oracle_run:
        return g
    if gated:
        return -1.0
    if not math.isfinite(g) or g <= 1.0:
        return 0.25 + 0.75 * (g if math.isfinite(g) else 0.0)
    scale = max(math.log(h) if h > 1 else -math.inf, REWARD_FLOOR_LN)
    return 1.0 + 2.5 * min(math.log(g) / scale, 2.0)


def round_cv(tree: Mapping[str, Any]) -> float:
    """Timing noise of one tree: median over workloads of the coefficient of variation of
    its per-round medians (the same code measured once per round)."""
    cvs = []
    for raw in (tree.get("round_medians") or {}).values():
        values = [v for v in raw if v is not None]
        if len(values) >= 2 and statistics.mean(values) > 0:
            cvs.append(statistics.stdev(values) / statistics.mean(values))
    return statistics.median(cvs) if cvs else math.nan


# --------------------------------------------------------------------------- significance
def _rounds(tree: Mapping[str, Any] | None, wl: str) -> list[float | None]:
    return list(((tree or {}).get("round_medians") or {}).get(wl) or [])


def log_ratios(base: Mapping[str, Any], other: Mapping[str, Any], wl: str) -> list[float]:
    """``ln(T_base,r / T_other,r)`` for every round r in which both trees measured ``wl``."""
    out = []
    for tb, to in zip(_rounds(base, wl), _rounds(other, wl), strict=False):
        if _valid(tb) and _valid(to):
            out.append(math.log(tb / to))  # type: ignore[operator]
    return out


def paired_t_p(d: Sequence[float]) -> float:
    """Two-sided p of a one-sample t-test of mean(d) = 0 (1.0 with fewer than 2 rounds)."""
    n = len(d)
    if n < 2:
        return 1.0
    mean = statistics.fmean(d)
    sd = statistics.stdev(d)
    if sd == 0 or not math.isfinite(sd):
        return 0.0 if mean != 0 else 1.0
    from scipy import stats

    return float(2 * stats.t.sf(abs(mean) / (sd / math.sqrt(n)), n - 1))


def signflip_p(d: Sequence[float], exact_max: int = 16, draws: int = 20000,
               seed: int = 0) -> float:
    """Two-sided p of a sign-flip permutation test of mean(d) = 0: exact over all 2^n sign
    patterns up to ``exact_max`` rounds, Monte Carlo (fixed seed) above."""
    import numpy as np

    x = np.asarray(d, dtype=float)
    n = len(x)
    if n == 0:
        return 1.0
    observed = abs(x.mean())
    if n <= exact_max:
        signs = 1 - 2 * ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1)
    else:
        signs = np.random.default_rng(seed).choice([-1.0, 1.0], size=(draws, n))
    means = np.abs((signs * x).mean(axis=1))
    return float(np.mean(means >= observed - 1e-12))


def mannwhitney_p(x: Sequence[float], y: Sequence[float]) -> float:
    """Two-sided p of Mann-Whitney U between two trees' raw samples of one workload."""
    if len(x) < 1 or len(y) < 1:
        return 1.0
    from scipy import stats

    if len(set(x) | set(y)) == 1:
        return 1.0
    return float(stats.mannwhitneyu(list(x), list(y), alternative="two-sided").pvalue)


def workload_p(base: Mapping[str, Any], other: Mapping[str, Any], wl: str,
               test: str = "t") -> float:
    """p-value of "``other`` times ``wl`` like ``base``" under ``test``."""
    if test == "t":
        return paired_t_p(log_ratios(base, other, wl))
    if test == "signflip":
        return signflip_p(log_ratios(base, other, wl))
    if test == "mannwhitney":
        samples = (base.get("samples") or {}).get(wl) or [], \
            (other.get("samples") or {}).get(wl) or []
        return mannwhitney_p(*samples)
    raise ValueError(f"unknown test {test!r}: one of {TESTS}")


def noise_floor(result: Mapping[str, Any], exclude: Iterable[str] = (),
                quantile: float = 0.95) -> tuple[float, str]:
    """(floor in ln units, where it came from): the ``quantile`` over workloads of
    ``|ln(T_base / T_copy)|`` for every base-vs-base copy in the run (``control`` trees,
    ``noop`` candidates, except ``exclude``); the default floor when there is none."""
    trees = result.get("trees") or {}
    base = medians(trees.get("baseline") or {})
    logs: list[float] = []
    used = []
    names = [*(result.get("controls") or []), *CONTROLS]
    for name in dict.fromkeys(names):
        if name in exclude or name not in trees:
            continue
        copy = medians(trees[name])
        vals = [abs(math.log(base[w] / copy[w])) for w in base
                if _valid(base[w]) and _valid(copy.get(w))]
        if vals:
            logs += vals
            used.append(name)
    if not logs:
        return DEFAULT_NOISE_FLOOR, "default"
    logs.sort()
    pos = quantile * (len(logs) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(logs) - 1)
    return logs[lo] + (logs[hi] - logs[lo]) * (pos - lo), "+".join(used)


def counted(s: Mapping[str, float], p: Mapping[str, float], floor: float,
            alpha: float = ALPHA) -> dict[str, float]:
    """Speedups that count: significant at ``alpha`` and outside the floor; else 1.0."""
    return {wl: v if p.get(wl, 1.0) < alpha and abs(math.log(v)) > floor else 1.0
            for wl, v in s.items()}


def _matrix(tree: Mapping[str, Any] | None, wls: Sequence[str], rounds: int) -> Any:
    import numpy as np

    out = np.full((rounds, len(wls)), np.nan)
    for j, wl in enumerate(wls):
        for r, v in enumerate(_rounds(tree, wl)[:rounds]):
            if _valid(v):
                out[r, j] = v
    return out


def bootstrap_ci(result: Mapping[str, Any], candidate: str, a_keep: Mapping[str, bool],
                 o_keep: Mapping[str, bool], gated: bool, higher: Iterable[str] = (),
                 draws: int = BOOTSTRAP, level: float = 0.95,
                 seed: int = 0) -> dict[str, list[float]]:
    """Percentile CIs over rounds of the overall advantage, its ratio form and the raw
    speedup G(a). Rounds are resampled with replacement; a workload's time in a replicate
    is the median of its resampled round medians; which speedups count stays fixed."""
    import warnings

    import numpy as np

    trees = result.get("trees") or {}
    wls = sorted(o_keep)
    nan = [math.nan, math.nan]
    rounds = max((len(_rounds(trees.get(n), w)) for n in ("baseline", "expert", candidate)
                  for w in wls), default=0)
    if not wls or rounds < 2:
        return {"advantage": nan, "advantage_ratio": nan, "speedup": nan}
    b = _matrix(trees.get("baseline"), wls, rounds)
    e = _matrix(trees.get("expert"), wls, rounds)
    c = b if gated else _matrix(trees.get(candidate), wls, rounds)
    idx = np.random.default_rng(seed).integers(0, rounds, size=(draws, rounds))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mb, me, mc = (np.nanmedian(m[idx], axis=1) for m in (b, e, c))
        flip = np.array([-1.0 if w in set(higher) else 1.0 for w in wls])
        la, lo = flip * np.log(mb / mc), flip * np.log(mb / me)
        if gated:
            la = np.zeros_like(la)
        la_eff = np.where(np.array([a_keep.get(w, False) for w in wls]), la, 0.0)
        lo_eff = np.where(np.array([o_keep.get(w, False) for w in wls]), lo, 0.0)
        ga, go = np.nanmean(la_eff, axis=1), np.nanmean(lo_eff, axis=1)
        stats = {"advantage": np.exp(ga) - np.exp(go), "advantage_ratio": np.exp(ga - go),
                 "speedup": np.exp(np.nanmean(la, axis=1))}
    tail = (1 - level) / 2 * 100
    out = {}
    for key, vals in stats.items():
        vals = vals[np.isfinite(vals)]
        out[key] = ([float(np.percentile(vals, tail)), float(np.percentile(vals, 100 - tail))]
                    if len(vals) else nan)
    return out



def _bad(tests: Mapping[str, Any] | None) -> int:
    if not tests:
        return 0
    return int(tests.get("failed", 0)) + int(tests.get("error", 0))


def infra_problem(result: Mapping[str, Any]) -> str | None:
    """Why the grader's result cannot rate any candidate (None when it can)."""
    if result.get("infra_error"):
        return str(result["infra_error"])
    trees = result.get("trees") or {}
    for name in ("baseline", "expert"):
        tree = trees.get(name)
        if tree is None or not tree.get("apply", {}).get("ok", False):
            return f"{name} tree could not be built"
        if not medians(tree):
            return f"{name} tree has no measured workload: {tree.get('bench_errors')}"
    return None


def evaluate(result: Mapping[str, Any], candidate: str, test: str = "t",
             alpha: float = ALPHA, floor: float | None = None) -> dict[str, Any]:
    """Every metric of one candidate (spec §5.5, §7, §8) as a flat dict.

    ``advantage_<level>`` (the headline) counts only significant speedups outside the
    noise floor (``floor``: calibrated from the run's base-vs-base copies when None);
    ``advantage_raw_<level>`` is the paper's plain difference, ``advantage_ratio_<level>``
    the ratio form, ``advantage_ci`` / ``advantage_ratio_ci`` / ``speedup_ci`` bootstrap
    CIs over rounds, ``speedup_significant`` whether the task's speedup G(a) is real
    (its CI excludes 1 and it lies outside the floor)."""
    out: dict[str, Any] = {"candidate": candidate, "infra_failure": False, "gated": False,
                           "failure": None}
    problem = infra_problem(result)
    trees = result.get("trees") or {}
    tree = trees.get(candidate)
    if problem is None and tree is None:
        problem = f"no tree for candidate {candidate!r}"
    if problem is not None:
        out.update(infra_failure=True, failure=f"infra: {problem}", success=False,
                   speedup=1.0, reward=0.0, num_valid_benchmarks=0,
                   total_benchmarks=len(result.get("workloads") or []),
                   **{f"advantage_{lv}": 0.0 for lv in LEVELS})
        return out
    assert tree is not None
    base, expert = medians(trees["baseline"]), medians(trees["expert"])
    if not tree["apply"]["ok"]:
        out["failure"] = "patch does not apply"
    elif _bad(tree.get("tests")) > _bad(trees["expert"].get("tests")):
        out["failure"] = "tests failed"
    elif (tree.get("snapshot") or {}).get("status") != "passed":
        out["failure"] = "snapshot mismatch"
    out["gated"] = gated = out["failure"] is not None
    higher = [wl for wl, m in (result.get("workload_meta") or {}).items()
              if (m or {}).get("higher_is_better")]
    agent = dict(base) if gated else medians(tree)
    a, o = speedups(base, expert, agent, higher)
    if gated:
        a = dict.fromkeys(o, 1.0)
    if floor is None:
        floor, floor_source = noise_floor(result, exclude=(candidate,))
    else:
        floor_source = "given"
    p_o = {wl: workload_p(trees["baseline"], trees["expert"], wl, test) for wl in o}
    p_a = ({wl: 1.0 for wl in a} if gated else
           {wl: workload_p(trees["baseline"], tree, wl, test) for wl in a})
    a_eff, o_eff = counted(a, p_a, floor, alpha), counted(o, p_o, floor, alpha)
    advs, raw = level_advantages(a_eff, o_eff), level_advantages(a, o)
    ratios = ratio_advantages(a_eff, o_eff)
    ci = bootstrap_ci(result, candidate, {w: a_eff[w] != 1.0 for w in a},
                      {w: o_eff[w] != 1.0 for w in o}, gated, higher)
    g = geomean(a.values()) if a else math.nan
    lo, hi = ci["speedup"]
    out.update(
        success=not gated,
        speedup=g if math.isfinite(g) else 1.0,
        expert_speedup=geomean(o.values()) if o else 1.0,
        max_speedup=max(a.values()) if a else 1.0,
        reward=reward(g if a else 0.0, gated),
        num_valid_benchmarks=len(a),
        total_benchmarks=len(result.get("workloads") or []),
        tests=tree.get("tests"),
        snapshot=tree.get("snapshot"),
        cv=round_cv(tree),
        workload_cv=dict(tree.get("cv") or {}),
        workload_speedups=a,
        workload_p=p_a,
        expert_workload_p=p_o,
        significant_workloads=sum(1 for w in a if a_eff[w] != 1.0),
        expert_significant_workloads=sum(1 for w in o if o_eff[w] != 1.0),
        test=test, alpha=alpha, noise_floor=floor, noise_floor_source=floor_source,
        speedup_ci=ci["speedup"],
        speedup_significant=bool(math.isfinite(g) and not gated and abs(math.log(g)) > floor
                                 and (lo > 1.0 or hi < 1.0)),
        advantage_ci=ci["advantage"],
        advantage_ratio_ci=ci["advantage_ratio"],
        **{f"advantage_{lv}": advs[lv] for lv in LEVELS},
        **{f"advantage_raw_{lv}": raw[lv] for lv in LEVELS},
        **{f"advantage_ratio_{lv}": ratios[lv] for lv in LEVELS},
    )
    return out


def triage(expert_touched: Iterable[str], agent_touched: Iterable[str]) -> float:
    """Share of the expert's changed functions that the agent's change also touched
    (descriptive; spec §6 leaves triage un-operationalised)."""
    expert = set(expert_touched)
    return len(expert & set(agent_touched)) / len(expert) if expert else 0.0


PROFILER = re.compile(r"cProfile|profile\b|line_profiler|pyinstrument|asv profile|timeit|py-spy")


def diagnosis(commands: Iterable[str]) -> bool:
    """Whether any of the agent's tool calls ran a profiler or a timer (descriptive)."""
    return any(PROFILER.search(c) for c in commands)


def aggregate(rows: Sequence[Mapping[str, Any]], level: float = 0.95) -> dict[str, float]:
    """Across tasks (spec §7.3 resolution): mean advantage per level (and its raw form),
    a t-interval on the mean overall advantage, the geometric mean of the ratio-form
    advantage, geometric and arithmetic mean speedup, success rate. Infra failures are
    excluded from all of these and counted (``infra_failures``, ``infra_failure_rate``;
    the Inspect scorer applies the same rule through NaN scores)."""
    rated = [r for r in rows if not r.get("infra_failure")]
    out: dict[str, float] = {
        "tasks": float(len(rows)),
        "tasks_rated": float(len(rated)),
        "infra_failures": float(len(rows) - len(rated)),
        "infra_failure_rate": (len(rows) - len(rated)) / len(rows) if rows else 0.0,
    }
    if not rated:
        return out
    for lv in LEVELS:
        out[f"advantage_{lv}"] = statistics.mean(float(r[f"advantage_{lv}"]) for r in rated)
    raw = [float(r.get("advantage_raw_overall", r["advantage_overall"])) for r in rated]
    out["advantage_raw_overall"] = statistics.mean(raw)
    ratios = [float(r["advantage_ratio_overall"]) for r in rated
              if r.get("advantage_ratio_overall") is not None]
    if ratios:
        out["advantage_ratio_geomean"] = geomean(ratios)
    advs = [float(r["advantage_overall"]) for r in rated]
    if len(advs) >= 2:
        from scipy import stats

        half = stats.t.ppf(0.5 + level / 2, len(advs) - 1) * statistics.stdev(advs) \
            / math.sqrt(len(advs))
        out["advantage_overall_ci_low"] = out["advantage_overall"] - half
        out["advantage_overall_ci_high"] = out["advantage_overall"] + half
    out["speedup_geomean"] = geomean(float(r["speedup"]) for r in rated)
    out["speedup_mean"] = statistics.mean(float(r["speedup"]) for r in rated)
    out["success_rate"] = statistics.mean(1.0 if r["success"] else 0.0 for r in rated)
    return out
