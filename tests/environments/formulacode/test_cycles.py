"""The cycles measure (issue 46): the callgrind client-request shim, the dump reader, the
runner's cycles timer under valgrind, and the refusal of work outside the measured thread
(the threaded-expert trap: callgrind counts only the thread that switched collection on)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from fcb_helpers import FC_BENCH, git_repo, load_runtime, make_suite

from benchmarks.formulacode.grading import evaluate
from environments.formulacode import metrics
from environments.formulacode.grader import GradeSettings, grade_local
from environments.formulacode.pack import materialize, pack_record

fc_callgrind = load_runtime("fc_callgrind")
fc_grade = load_runtime("fc_grade")
needs_valgrind = pytest.mark.skipif(shutil.which("valgrind") is None,
                                    reason="valgrind is not installed")

SERIAL = """
    def work(n):
        total = 0
        for i in range(n):
            total += i & 1023  # a one-digit int throughout: a constant cost per pass
        return total
"""

THREADED = SERIAL + """
    from concurrent.futures import ThreadPoolExecutor

    POOL = ThreadPoolExecutor(2)

    def work_threaded(n):
        return sum(POOL.map(work, [n // 2, n - n // 2]))
"""

EXPERT = """
    from concurrent.futures import ThreadPoolExecutor

    POOL = ThreadPoolExecutor(2)

    def _work(n):
        total = 0
        for i in range(n):
            total += i & 1023  # a one-digit int throughout: a constant cost per pass
        return total

    def work(n):
        return sum(POOL.map(_work, [n // 2, n - n // 2]))
"""

BENCH = """
    from pkg.core import {fn}

    class Loop:
        params = [20000, 40000]

        def time_work(self, n):
            return {fn}(n)
"""


def cycles_run(tree: Path, out_dir: Path, *extra: str) -> dict[str, Any]:
    """``fc_bench time --timer cycles`` on ``tree`` under callgrind, as the grader runs it."""
    out_dir.mkdir(parents=True, exist_ok=True)
    pattern = str(out_dir / "cg.%p")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PYTHONHASHSEED="0", FC_CALLGRIND_OUT=pattern, **fc_grade.CYCLES_MALLOC_ENV)
    out = out_dir / "result.json"
    done = subprocess.run([*fc_callgrind.valgrind_prefix(pattern), sys.executable,
                           str(FC_BENCH), "time", str(tree), str(out), "--timer", "cycles",
                           *extra], capture_output=True, text=True, env=env, timeout=600,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return dict(json.loads(out.read_text()))


def test_client_requests_are_a_no_op_outside_valgrind() -> None:
    """The same machine code runs natively: the request returns its default, 0."""
    req = fc_callgrind.Requests()
    assert req.running_on_valgrind() is False
    assert req(fc_callgrind.START_INSTRUMENTATION) == 0
    req.zero()
    req.dump("label")
    req.stop()
    assert fc_callgrind.DUMP_STATS_AT == 0x43540003  # VG_USERREQ_TOOL_BASE('C','T') + 3


def test_dump_totals_and_the_cycle_estimate(tmp_path: Path) -> None:
    dump = tmp_path / "cg.7.1-01"
    dump.write_text("version: 1\nevents: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\n"
                    "fl=x\nfn=y\n1 5 1 1 0 0 0 0 0 0\n"
                    "summary: 1000 300 200 4 5 6 1 2 3\ntotals: 1000 300 200 4 5 6 1 2 3\n")
    events = fc_callgrind.read_totals(dump)
    assert events["Ir"] == 1000 and events["DLmw"] == 3
    assert fc_callgrind.cycles(events) == 1000 + 10 * (4 + 5 + 6) + 100 * (1 + 2 + 3)
    assert fc_callgrind.thread_of(dump) == 1
    assert fc_callgrind.thread_of(tmp_path / "cg.7-03") == 3
    (tmp_path / "cg.8.1-01").write_text("")
    assert fc_callgrind.dump_files(str(tmp_path / "cg.%p"), 7) == [dump]
    with pytest.raises(ValueError):
        fc_callgrind.read_totals(tmp_path / "cg.8.1-01")


def test_outside_work_rule() -> None:
    alone = {"ir": 1e6, "outside_ir": 0, "process_cpu": 0.5, "outside_cpu": 0.001}
    pooled = {"ir": 2e5, "outside_ir": 0, "process_cpu": 3.8, "outside_cpu": 3.0}
    counted_pool = {"ir": 1e6, "outside_ir": 5e5, "process_cpu": 0.5, "outside_cpu": 0.0}
    assert not metrics.outside_work(alone)
    assert metrics.outside_work(pooled) and metrics.outside_work(counted_pool)
    result = {"timer": "cycles", "trees": {"baseline": {"cycles": {"w": [alone]}},
                                           "expert": {"cycles": {"w": [pooled]}}}}
    reason = metrics.cycles_refusal(result)
    assert reason is not None and "expert: 1 workload(s)" in reason
    assert metrics.cycles_refusal({**result, "timer": "wall"}) is None


@needs_valgrind
@pytest.mark.slow
def test_cycles_are_identical_across_fresh_processes(tmp_path: Path) -> None:
    tree = make_suite(tmp_path / "tree", {"bench_loop": BENCH.format(fn="work")},
                      {"pkg/__init__.py": "", "pkg/core.py": SERIAL})
    first = cycles_run(tree, tmp_path / "a")
    second = cycles_run(tree, tmp_path / "b")
    assert not first["errors"] and first["timer"] == "cycles"
    assert first["samples"].keys() == second["samples"].keys()
    for wl, (value,) in first["samples"].items():  # the same to a few counts in millions
        assert second["samples"][wl][0] == pytest.approx(value, rel=1e-5, abs=50)
    small, large = (first["meta"][f"bench_loop.Loop.time_work({n})"]["cycles"]
                    for n in (20000, 40000))
    # twice the loop, about twice the instructions (plus a fixed call overhead); with
    # `i * i` the squares crossed 2**30 at i = 32768 and became two-digit ints (2.07x in CI)
    ratio = large["ir"] / small["ir"]
    assert 1.8 < ratio < 2.05, ratio
    for counts in (small, large):
        assert counts["cycles"] >= counts["ir"] > 0
        assert counts["l1_misses"] >= counts["ll_misses"] >= 0
        assert not metrics.outside_work(counts)
    assert not list((tmp_path / "a").glob("cg.*.*-*"))  # the workloads' dumps are cleaned


@needs_valgrind
@pytest.mark.slow
def test_threaded_work_is_seen_outside_the_measured_thread(tmp_path: Path) -> None:
    """A thread pool's share is not in the count (the trap) and the runner records it."""
    tree = make_suite(tmp_path / "tree", {"bench_loop": BENCH.format(fn="work_threaded")},
                      {"pkg/__init__.py": "", "pkg/core.py": THREADED})
    result = cycles_run(tree, tmp_path / "cg")
    for counts in (m["cycles"] for m in result["meta"].values()):
        assert metrics.outside_work(counts)
        assert counts["outside_cpu"] > 0.5 * counts["process_cpu"]


@needs_valgrind
@pytest.mark.slow
def test_grader_refuses_a_cycles_task_whose_expert_uses_threads(tmp_path: Path) -> None:
    """End to end on a synthetic task: serial base, thread-pool expert, cycles timer."""
    repo = git_repo(make_suite(tmp_path / "repo", {"bench_loop": BENCH.format(fn="work")},
                               {"pkg/__init__.py": "", "pkg/core.py": SERIAL}))
    (repo / "pkg" / "core.py").write_text(textwrap.dedent(EXPERT))
    patch = subprocess.run(["git", "diff", "--", "pkg"], cwd=repo, capture_output=True,
                           text=True, check=True).stdout
    subprocess.run(["git", "checkout", "--", "pkg"], cwd=repo, check=True)
    assert "ThreadPoolExecutor" in patch
    settings = GradeSettings(timer="cycles", cycles_rounds=1).for_task({})
    result = grade_local(repo, patch, {}, settings, tmp_path / "work")
    assert result.get("timer") == "cycles", result.get("infra_error")
    ev = evaluate(result, "expert")
    assert ev["infra_failure"] and "cycles timer refused" in ev["failure"]
    assert "expert:" in ev["failure"] and "baseline" not in ev["failure"]


@needs_valgrind
@pytest.mark.slow
def test_pmap_threaded_expert_is_refused_under_cycles(tmp_path: Path) -> None:
    """The issue's trap on the pack: pmap's expert runs large arrays' chunks in a thread
    pool. Under callgrind the pool's work is not counted, so the expert's cycles read as a
    large speedup; the runner sees the other threads' CPU time and the grader refuses."""
    base = materialize("pmap", tmp_path / "t0")
    expert = materialize("pmap", tmp_path / "t1")
    (tmp_path / "expert.patch").write_text(pack_record("pmap", 1)["patch"])
    subprocess.run(["git", "apply", str(tmp_path / "expert.patch")], cwd=expert, check=True)
    big, small = ("bench_apply.Activations.time_apply(1000000, 'gelu')",
                  "bench_apply.Activations.time_apply(2000, 'gelu')")
    only = tmp_path / "only.json"
    only.write_text(json.dumps([big, small]))
    b = cycles_run(base, tmp_path / "cg_base", "--only", str(only))
    e = cycles_run(expert, tmp_path / "cg_expert", "--only", str(only))
    assert not b["errors"] and not e["errors"], (b["errors"], e["errors"])
    counts = {(tree, wl): r["meta"][wl]["cycles"] for tree, r in (("baseline", b),
                                                                  ("expert", e))
              for wl in (big, small)}
    assert metrics.outside_work(counts[("expert", big)])  # the pool's chunks
    assert not any(metrics.outside_work(counts[k]) for k in
                   (("baseline", big), ("baseline", small), ("expert", small)))
    # what the trap would report: the measuring thread's share of the work only
    assert counts[("baseline", big)]["cycles"] > 1.8 * counts[("expert", big)]["cycles"]
    result = {"timer": "cycles", "trees": {
        tree: {"cycles": {wl: [counts[(tree, wl)]] for wl in (big, small)}}
        for tree in ("baseline", "expert")}}
    reason = metrics.cycles_refusal(result)
    assert reason is not None and "expert: 1 workload(s)" in reason and "baseline" not in reason
