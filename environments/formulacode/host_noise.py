"""A probe of how quiet the machine is, taken before and after a timing run.

Issue 21's acceptance holds "on a quiet machine", and on a shared VM quiet comes and goes:
the same pack gave round-to-round dispersions of 2-4% in one hour and 10-30% in another,
with nothing else running in the guest (a neighbour on the host takes the cores). A timing
run that fails its CV criteria should say which of the two it met. The probe times a fixed
pure-Python loop (no allocation beyond ints, no I/O, no numpy: nothing the pack's code
changes) many times on each CPU the run uses, pinned, and reports the spread. On an idle,
dedicated core that spread is a few percent; far above it, timings of any code on that core
are noisy too, and a run's workload CVs cannot reach 2%.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Iterable
from typing import Any

#: above this sample CV of the probe on any CPU the machine is reported as not quiet: a
#: heuristic bound (a fixed ~10 ms loop on an idle core varies by 1-3%)
QUIET_CV = 0.05
LOOP_ITERATIONS = 150_000


def _loop(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i
    return total


def _timings(reps: int, iterations: int) -> list[float]:
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        _loop(iterations)
        times.append(time.perf_counter() - start)
    return times


def summarise(times: list[float]) -> dict[str, float]:
    """Median (ms), sample CV and the 90th percentile over the median of one CPU's probe."""
    if len(times) < 2:
        raise ValueError(f"a probe needs at least 2 timings, got {len(times)}")
    median = statistics.median(times)
    ordered = sorted(times)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return {"median_ms": round(median * 1e3, 3),
            "cv": round(statistics.stdev(times) / statistics.fmean(times), 4),
            "p90_over_median": round(p90 / median, 4)}


def probe(cpus: Iterable[int] | None = None, reps: int = 60,
          iterations: int = LOOP_ITERATIONS) -> dict[str, Any]:
    """Time the fixed loop ``reps`` times pinned to each of ``cpus`` (default: every CPU
    this process may use); the process's affinity is restored afterwards.

    Returns ``{"cpus": {cpu: summary}, "max_cv": ..., "quiet": bool, "quiet_cv": ...}``.
    On a platform without CPU affinity the loop runs unpinned under the key ``"any"``."""
    per_cpu: dict[str, dict[str, float]] = {}
    if not hasattr(os, "sched_setaffinity"):  # pragma: no cover - not Linux
        per_cpu["any"] = summarise(_timings(reps, iterations))
    else:
        allowed = os.sched_getaffinity(0)
        chosen = sorted(allowed if cpus is None else set(cpus))
        try:
            for cpu in chosen:
                os.sched_setaffinity(0, {cpu})
                _loop(iterations)  # warm the interpreter on this core
                per_cpu[str(cpu)] = summarise(_timings(reps, iterations))
        finally:
            os.sched_setaffinity(0, allowed)
    max_cv = max(s["cv"] for s in per_cpu.values())
    return {"cpus": per_cpu, "max_cv": max_cv, "quiet": max_cv <= QUIET_CV,
            "quiet_cv": QUIET_CV, "reps": reps, "iterations": iterations}
