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
failures, kept apart from agent failures (:func:`infra_problem`).

A speedup counts only when it is significant at ``alpha`` *and* outside the noise floor
``|ln s| > floor`` (:func:`counted`); otherwise it is 1.0 for the advantage (agent and
expert alike). The floor is calibrated from base-vs-base measurements in the same run (the
``control`` tree, or a ``noop`` candidate): the 95th percentile over workloads of
``|ln(T_base / T_copy)|`` (:func:`noise_floor`).

This module is the domain arithmetic only. The statistics (per-workload p-values, bootstrap
CIs over rounds, the across-task t interval) live in ``harness.stats``, which environments
may not import; ``benchmarks.formulacode.grading`` combines the two into a candidate's
metrics (``evaluate``) and the across-task summary (``aggregate``). What a bootstrap draw
of rounds means for a task's advantage is :class:`RoundResample`, here.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

LEVELS = ("module", "class", "function", "overall")
REWARD_FLOOR_LN = math.log(1.08)
ALPHA = 0.05
DEFAULT_NOISE_FLOOR = math.log(1.02)  # used only when the run has no base-vs-base control
CONTROLS = ("control", "noop")
#: the least noise floor of a cycles run: the same code at another seeded memory layout
#: moved simulated cycles by up to this much (README, "Cycles")
CYCLES_FLOOR = math.log(1.01)


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


def workload_dispersions(tree: Mapping[str, Any]) -> dict[str, float]:
    """Per workload: the coefficient of variation of its per-round medians (the same code
    measured once per round, each time in a fresh interpreter); the machine's noise."""
    out = {}
    for wl, raw in (tree.get("round_medians") or {}).items():
        values = [v for v in raw if v is not None]
        if len(values) >= 2 and statistics.mean(values) > 0:
            out[wl] = statistics.stdev(values) / statistics.mean(values)
    return out


def workload_cvs(tree: Mapping[str, Any]) -> dict[str, float]:
    """Per workload: the CV of its measured value, the relative standard error over rounds
    (dispersion / sqrt(rounds)); what the calibration rounds bring under the target.
    Recomputed from the round medians, so a regrade of any raw result gets the same."""
    rounds = {wl: sum(v is not None for v in raw)
              for wl, raw in (tree.get("round_medians") or {}).items()}
    return {wl: d / math.sqrt(rounds[wl]) for wl, d in workload_dispersions(tree).items()}


def round_cv(tree: Mapping[str, Any]) -> float:
    """Timing noise of one tree: the median over workloads of :func:`workload_dispersions`."""
    cvs = list(workload_dispersions(tree).values())
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


class RoundResample:
    """The advantage, its ratio form and the raw speedup G(a) of one candidate on resampled
    timing rounds: the arithmetic behind the bootstrap CIs, which ``harness.stats``
    computes (its ``bootstrap_rows_ci`` draws the rounds; this says what a draw means).

    For an ``(n_boot, rounds)`` matrix of round indices, a workload's time in a replicate is
    the median of its resampled round medians. Which speedups count is decided again in
    every replicate when ``retest`` is given (a function from resampled per-round log
    ratios, shape ``(n_boot, rounds, workloads)``, to p-values ``(n_boot, workloads)``):
    significant at ``alpha`` and outside ``floor``, the full data's rule. Without it the
    masks stay fixed (``a_keep`` / ``o_keep``: the decision on the full data), which
    understates the CI: two timings of the same code can pass the test on different
    workloads, and that difference is part of the advantage's noise.
    The three statistics share one computation per index matrix.
    """

    KEYS = ("advantage", "advantage_ratio", "speedup")

    def __init__(self, result: Mapping[str, Any], candidate: str, a_keep: Mapping[str, bool],
                 o_keep: Mapping[str, bool], gated: bool, higher: Iterable[str] = (),
                 retest: Callable[[Any], Any] | None = None, floor: float = 0.0,
                 alpha: float = ALPHA) -> None:
        trees = result.get("trees") or {}
        self.wls = sorted(o_keep)
        self.rounds = max((len(_rounds(trees.get(n), w)) for n in ("baseline", "expert",
                                                                      candidate)
                           for w in self.wls), default=0)
        self.gated = gated
        self._a_keep = [a_keep.get(w, False) for w in self.wls]
        self._o_keep = [o_keep.get(w, False) for w in self.wls]
        self._higher = set(higher)
        self._retest, self._floor, self._alpha = retest, floor, alpha
        self._trees = (trees.get("baseline"), trees.get("expert"),
                       None if gated else trees.get(candidate))
        self._idx: Any = None
        self._out: dict[str, Any] = {}

    @property
    def usable(self) -> bool:
        """Whether there is anything to resample (some workload, at least two rounds)."""
        return bool(self.wls) and self.rounds >= 2

    def statistic(self, key: str) -> Any:
        """``idx -> one value per replicate`` for ``key`` (one of :attr:`KEYS`)."""
        return lambda idx: self._compute(idx)[key]

    def _compute(self, idx: Any) -> dict[str, Any]:
        import warnings

        import numpy as np

        if idx is self._idx:
            return self._out
        b = _matrix(self._trees[0], self.wls, self.rounds)
        e = _matrix(self._trees[1], self.wls, self.rounds)
        c = b if self.gated else _matrix(self._trees[2], self.wls, self.rounds)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            mb, me, mc = (np.nanmedian(m[idx], axis=1) for m in (b, e, c))
            flip = np.array([-1.0 if w in self._higher else 1.0 for w in self.wls])
            la, lo = flip * np.log(mb / mc), flip * np.log(mb / me)
            if self.gated:
                la = np.zeros_like(la)
            if self._retest is None:
                a_keep, o_keep = np.array(self._a_keep), np.array(self._o_keep)
            else:
                rb = b[idx]
                p_a = self._retest(np.log(rb / c[idx]))
                p_o = self._retest(np.log(rb / e[idx]))
                a_keep = (p_a < self._alpha) & (np.abs(la) > self._floor)
                o_keep = (p_o < self._alpha) & (np.abs(lo) > self._floor)
            la_eff = np.where(a_keep, la, 0.0)
            lo_eff = np.where(o_keep, lo, 0.0)
            ga, go = np.nanmean(la_eff, axis=1), np.nanmean(lo_eff, axis=1)
            self._out = {"advantage": np.exp(ga) - np.exp(go),
                         "advantage_ratio": np.exp(ga - go),
                         "speedup": np.exp(np.nanmean(la, axis=1))}
        self._idx = idx
        return self._out


def failed_tests(tests: Mapping[str, Any] | None) -> int:
    """Failed plus errored tests of a tree's pytest counts (0 when there are none)."""
    if not tests:
        return 0
    return int(tests.get("failed", 0)) + int(tests.get("error", 0))


#: a cycles workload is refused when other threads used more than this share of the
#: process's CPU time during its measured calls (and at least OUTSIDE_CPU_MIN seconds),
#: or ran more than OUTSIDE_IR_SHARE of its instructions: callgrind counts one thread, so
#: their work is missing from the estimate (the threaded expert of pmap reads 285x)
OUTSIDE_CPU_SHARE = 0.05
OUTSIDE_CPU_MIN = 0.002
OUTSIDE_IR_SHARE = 0.01


def outside_work(counts: Mapping[str, Any]) -> bool:
    """Whether one cycles measurement saw work outside the measuring thread."""
    proc, outside = float(counts.get("process_cpu") or 0.0), float(counts.get("outside_cpu")
                                                                    or 0.0)
    ir, outside_ir = float(counts.get("ir") or 0.0), float(counts.get("outside_ir") or 0.0)
    return ((outside > OUTSIDE_CPU_MIN and outside > OUTSIDE_CPU_SHARE * proc)
            or outside_ir > OUTSIDE_IR_SHARE * max(ir, 1.0))


def cycles_refusal(result: Mapping[str, Any]) -> str | None:
    """Why a cycles run cannot be graded (None when it can): some workload of some tree
    did work outside the thread callgrind counted, so its cycles are not its cost."""
    if result.get("timer") != "cycles":
        return None
    found: dict[str, list[str]] = {}
    for name, tree in (result.get("trees") or {}).items():
        for wl, runs in ((tree or {}).get("cycles") or {}).items():
            if any(outside_work(c or {}) for c in runs):
                found.setdefault(name, []).append(wl)
    if not found:
        return None
    parts = [f"{name}: {len(wls)} workload(s), e.g. {sorted(wls)[0]}"
             for name, wls in sorted(found.items())]
    return ("cycles timer refused: work ran outside the measured thread, which callgrind "
            "does not count (" + "; ".join(parts) + "); grade this task on the wall clock")


def infra_problem(result: Mapping[str, Any]) -> str | None:
    """Why the grader's result cannot rate any candidate (None when it can)."""
    if result.get("infra_error"):
        return str(result["infra_error"])
    refused = cycles_refusal(result)
    if refused:
        return refused
    trees = result.get("trees") or {}
    for name in ("baseline", "expert"):
        tree = trees.get(name)
        if tree is None or not tree.get("apply", {}).get("ok", False):
            return f"{name} tree could not be built"
        if not medians(tree):
            return f"{name} tree has no measured workload: {tree.get('bench_errors')}"
    return None


def triage(expert_touched: Iterable[str], agent_touched: Iterable[str]) -> float:
    """Share of the expert's changed functions that the agent's change also touched
    (descriptive; spec §6 leaves triage un-operationalised)."""
    expert = set(expert_touched)
    return len(expert & set(agent_touched)) / len(expert) if expert else 0.0


PROFILER = re.compile(r"cProfile|profile\b|line_profiler|pyinstrument|asv profile|timeit|py-spy")


def diagnosis(commands: Iterable[str]) -> bool:
    """Whether any of the agent's tool calls ran a profiler or a timer (descriptive)."""
    return any(PROFILER.search(c) for c in commands)
