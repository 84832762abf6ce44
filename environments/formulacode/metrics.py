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
failures and are kept apart from agent failures.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

LEVELS = ("module", "class", "function", "overall")
REWARD_FLOOR_LN = math.log(1.08)


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
    base: Mapping[str, float], expert: Mapping[str, float], agent: Mapping[str, float]
) -> tuple[dict[str, float], dict[str, float]]:
    """(a_i, o_i) over the workloads valid in all three trees (spec §7.1)."""
    a: dict[str, float] = {}
    o: dict[str, float] = {}
    for wl, tb in base.items():
        te, ta = expert.get(wl), agent.get(wl)
        if not (_valid(tb) and _valid(te) and _valid(ta)):
            continue
        ai, oi = tb / ta, tb / te  # type: ignore[operator]
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


def evaluate(result: Mapping[str, Any], candidate: str) -> dict[str, Any]:
    """Every metric of one candidate (spec §5.5, §7, §8) as a flat dict."""
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
    out["gated"] = out["failure"] is not None
    agent = dict(base) if out["gated"] else medians(tree)
    a, o = speedups(base, expert, agent)
    if out["gated"]:
        a = dict.fromkeys(o, 1.0)
    advs = level_advantages(a, o)
    g = geomean(a.values()) if a else math.nan
    out.update(
        success=not out["gated"],
        speedup=g if math.isfinite(g) else 1.0,
        expert_speedup=geomean(o.values()) if o else 1.0,
        max_speedup=max(a.values()) if a else 1.0,
        reward=reward(g if a else 0.0, out["gated"]),
        num_valid_benchmarks=len(a),
        total_benchmarks=len(result.get("workloads") or []),
        tests=tree.get("tests"),
        snapshot=tree.get("snapshot"),
        cv=round_cv(tree),
        workload_speedups=a,
        **{f"advantage_{lv}": advs[lv] for lv in LEVELS},
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


def aggregate(rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Across tasks (spec §7.3 resolution): mean advantage per level, geometric and
    arithmetic mean speedup, success rate, infra-failure rate (infra rows excluded from
    the others)."""
    rated = [r for r in rows if not r.get("infra_failure")]
    out: dict[str, float] = {
        "tasks": float(len(rows)),
        "infra_failure_rate": (len(rows) - len(rated)) / len(rows) if rows else 0.0,
    }
    if not rated:
        return out
    for lv in LEVELS:
        out[f"advantage_{lv}"] = statistics.mean(float(r[f"advantage_{lv}"]) for r in rated)
    out["speedup_geomean"] = geomean(float(r["speedup"]) for r in rated)
    out["speedup_mean"] = statistics.mean(float(r["speedup"]) for r in rated)
    out["success_rate"] = statistics.mean(1.0 if r["success"] else 0.0 for r in rated)
    return out
