"""The in-container half of the FormulaCode grader (stdlib only; numpy used when present).

It measures and reports raw facts; the host (``environments.formulacode.metrics``) turns them
into speedups, advantages and the reward, so the arithmetic is unit-testable without docker.

    python3 fc_grade.py CONFIG.json        # prints FORMULACODE_RESULT_START ... _END

Steps (spec §5): build one tree per candidate from a pristine export of the base commit —
``baseline`` (nothing applied), ``expert`` (the PR's patch) and each candidate (an agent's
diff, or a patch file) — then restore the benchmark dir, the asv config and every test file
to the base version in every tree (agents cannot edit workloads or tests), run the tests in
each tree, capture benchmark return values on the baseline and verify the others against
them, and time all trees interleaved over rounds (order rotated each round, reversed every
other) in the same container. Each timing run is a fresh interpreter (``fc_bench.py``,
which forks one child per workload).

Timer and CPUs (``cfg["timer"]``, ``cfg["cpus"]``, from the task's metadata): CPU time
(``process_cpu``, the default) pins every run to one CPU with BLAS/OpenMP at one thread;
wall-clock (``wall``) runs on the task's declared CPU set with that many threads, so a
parallelisation or I/O-hiding change can show its speedup (see :func:`cpu_plan`).
``cycles`` runs every timing run under callgrind (``valgrind --tool=callgrind
--cache-sim=yes --instr-atstart=no``, pinned like CPU time) and records per workload the
simulated cycles of the measured calls (``fc_bench``'s cycles timer): deterministic, so
whatever the load one round measures what five would, and the trees of a round share one
layout (seeded per round, not per tree: identical code then measures identically). It
counts one thread: each tree's ``cycles`` block lists per workload the instructions other
threads ran during the measured call (``outside_ir``), which the host refuses to grade.

Calibration: inside a round each workload samples until the CV of its samples reaches
``cv_target`` (or its per-round budget is spent). A fresh interpreter lands the same code
at a different memory layout, which moves its timings by a few percent however many samples
it takes, so the CV that more measurement can lower is the CV *of the workload's value*: the
relative standard error over rounds, ``sd(round medians) / (sqrt(rounds) mean)``. After
``rounds`` rounds, extra rounds (up to ``max_rounds``, within ``calibration_budget``
seconds) re-time only the workloads whose value's CV is still above the target. Recorded per
workload: the achieved CV (``trees[name]["cv"]``), the round-to-round dispersion of the
medians (``dispersion``: the machine's between-process noise) and every round's sample CV
(``sample_cv``). ``controls`` (e.g. ``["control"]``) add extra copies of the base tree that
are only timed: base-vs-base measurements from which the host calibrates the noise floor.

Layout: the trees are timed at paths of equal length (``trees/00``, ``trees/01``, ...) and
every timing run gets its own seeded layout shift (``FC_LAYOUT_SEED``, which ``fc_bench``
turns into heap padding, and an environment pad of random length, which moves the stack),
drawn per round and tree from ``layout_seed``. Without it a tree keeps one layout for the
whole run, and two copies of the same code differed by up to 3% across every round: a bias
that no number of rounds removes and no bootstrap over rounds sees. Randomised, it becomes
round-to-round noise that the paired tests and the CIs do see.
"""

from __future__ import annotations

import ast
import json
import math
import os
import pickle
import random
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BENCH = HERE / "fc_bench.py"
EXCLUDES = (":(exclude)**/__pycache__/**", ":(exclude)*.pyc", ":(exclude)*.egg-info/**",
            ":(exclude).asv/**")
TEST_FILE = re.compile(r"(^|/)(test_[^/]*\.py|[^/]*_test\.py|conftest\.py)$")
RTOL, ATOL = 1e-5, 1e-8
#: glibc's malloc for cycles runs with fixed thresholds: its dynamic mmap threshold made
#: whether a large array landed in fresh (cold) pages depend on the run's history, and so
#: one topk workload's simulated cycles moved by 15% between two layouts (0.01% with these)
#: a tree's timing run under callgrind may take this many times the clock timers' limit
CYCLES_BENCH_FACTOR = 4
CYCLES_MALLOC_ENV = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20),
                     "MALLOC_TRIM_THRESHOLD_": str(1 << 30), "MALLOC_TOP_PAD_": "0"}


def sh(cmd: list[str], cwd: Path | None = None, timeout: float | None = None,
       env: dict[str, str] | None = None, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env=env, input=stdin, check=False)


def agent_patch(repo: Path, base: str) -> str:
    """``git diff`` of the working tree (untracked files included) against the base commit,
    built in a throw-away index so the agent's repository is left as it is."""
    env = dict(os.environ, GIT_INDEX_FILE=str(Path("/tmp") / f"fc_index_{os.getpid()}"))
    sh(["git", "read-tree", base], cwd=repo, env=env)
    sh(["git", "add", "-A", "--", ".", *EXCLUDES], cwd=repo, env=env)
    done = sh(["git", "diff", "--cached", "--binary", base, "--", ".", *EXCLUDES], cwd=repo,
              env=env)
    Path(env["GIT_INDEX_FILE"]).unlink(missing_ok=True)
    return done.stdout


def bench_dir_name(tree: Path) -> str:
    sys.path.insert(0, str(HERE))
    import fc_bench

    return str(fc_bench.benchmark_dir(tree).relative_to(tree))


def protected(tree: Path, bench_rel: str) -> list[str]:
    """Paths restored to base after a patch: asv configs, the benchmark dir, test files."""
    out = [p.name for p in tree.glob("asv*.json")] + [bench_rel]
    for path in tree.rglob("*.py"):
        rel = path.relative_to(tree).as_posix()
        if TEST_FILE.search(rel) or rel.startswith("tests/") or "/tests/" in rel:
            out.append(rel)
    return sorted(set(out))


def make_tree(pristine: Path, dest: Path, patch: str | None) -> dict[str, Any]:
    """Copy the base export, apply ``patch``, restore protected paths from the base."""
    shutil.copytree(pristine, dest, symlinks=True)
    info: dict[str, Any] = {"ok": True, "error": "", "tamper": []}
    if patch and patch.strip():
        pfile = dest.parent / f"{dest.name}.patch"
        pfile.write_text(patch)
        done = sh(["git", "apply", "--whitespace=nowarn", str(pfile)], cwd=dest)
        if done.returncode != 0:
            return {"ok": False, "error": done.stderr.strip()[-2000:], "tamper": []}
    bench_rel = bench_dir_name(pristine)
    for rel in sorted(set(protected(dest, bench_rel)) | set(protected(pristine, bench_rel))):
        target, source = dest / rel, pristine / rel
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        elif target.exists() or target.is_symlink():
            if not source.exists():
                info["tamper"].append(f"added protected file {rel}")
            target.unlink()
        if source.is_dir():
            shutil.copytree(source, target, symlinks=True)
        elif source.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return info


def run_tests(tree: Path, python: str, timeout: float) -> dict[str, Any]:
    """pytest over the tree's test suite; counts from the junit report."""
    junit = tree.parent / f"{tree.name}.junit.xml"
    target = "tests" if (tree / "tests").is_dir() else "."
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONDONTWRITEBYTECODE="1")
    try:
        done = sh([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}",
                   target], cwd=tree, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"exit_code": 124, "total": 0, "passed": 0, "failed": 0, "error": 1,
                "skipped": 0, "tail": "timeout"}
    counts = {"total": 0, "failed": 0, "error": 0, "skipped": 0}
    if junit.exists():
        root = ET.parse(junit).getroot()
        suites = [root] if root.tag == "testsuite" else list(root)
        for suite in suites:
            counts["total"] += int(suite.get("tests", 0))
            counts["failed"] += int(suite.get("failures", 0))
            counts["error"] += int(suite.get("errors", 0))
            counts["skipped"] += int(suite.get("skipped", 0))
    elif done.returncode not in (0, 5):
        counts["error"] = 1
    counts["passed"] = counts["total"] - counts["failed"] - counts["error"] - counts["skipped"]
    return {"exit_code": done.returncode, **counts, "tail": done.stdout[-1500:]}


def _close(a: Any, b: Any) -> str:
    """'pass', 'fail' or 'skip' for a verified value ``a`` against the snapshot ``b``."""
    try:
        if isinstance(b, dict) and "__fc_placeholder__" in b:
            return "skip"
        if a is None and b is None:
            return "pass"
        try:
            import numpy as np
        except ImportError:  # pragma: no cover
            np = None  # type: ignore[assignment]
        if np is not None and isinstance(b, np.ndarray):
            if not isinstance(a, np.ndarray) or a.shape != b.shape or a.dtype != b.dtype:
                return "fail"
            if a.dtype.kind in "fc":
                return "pass" if bool(np.all(np.abs(a - b) <= ATOL + RTOL * np.abs(b))) else "fail"
            return "pass" if bool(np.array_equal(a, b)) else "fail"
        numeric = (int, float, complex) + ((np.number,) if np is not None else ())
        if isinstance(b, numeric) and not isinstance(b, bool):
            if not isinstance(a, numeric) or isinstance(a, bool):
                return "fail"
            return "pass" if abs(a - b) <= ATOL + RTOL * abs(b) else "fail"  # type: ignore[operator]
        if isinstance(b, dict):
            if not isinstance(a, dict) or set(a) != set(b):
                return "fail"
            results = [_close(a[k], b[k]) for k in b]
            return "fail" if "fail" in results else "pass"
        if isinstance(b, list | tuple):
            if not isinstance(a, list | tuple) or len(a) != len(b):
                return "fail"
            results = [_close(x, y) for x, y in zip(a, b, strict=True)]
            return "fail" if "fail" in results else "pass"
        eq = a == b
        if hasattr(eq, "all"):
            eq = eq.all()
        return "pass" if bool(eq) else "fail"
    except Exception:  # noqa: BLE001 - comparison errors skip, as in the spec
        return "skip"


def verify(base: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """Snapshot summary: counts and the 3x3 baseline->verify transition matrix."""
    states = ("pass", "fail", "skip")
    matrix = {f"{a}-to-{b}": 0 for a in states for b in states}
    for key in sorted(set(base) & set(other)):
        b, o = base[key], other[key]
        b_state = {"ok": "pass", "error": "fail"}.get(b["status"], "skip")
        if o["status"] in ("error", "skip"):
            o_state = "fail" if o["status"] == "error" else "skip"
        elif b_state != "pass":
            o_state = "pass"  # nothing to compare against: ran without error
        else:
            o_state = _close(o["value"], b["value"])
        matrix[f"{b_state}-to-{o_state}"] += 1
    passed = matrix["pass-to-fail"] == 0 and bool(set(base) & set(other))
    return {"status": "passed" if passed else "failed", "transitions": matrix,
            "compared": len(set(base) & set(other))}


def touched_functions(pristine: Path, patch: str) -> list[str]:
    """``file::qualname`` of every base function whose lines a patch's hunks change."""
    out: set[str] = set()
    current: str | None = None
    ranges: dict[str, list[tuple[int, int]]] = {}
    for line in patch.splitlines():
        if line.startswith("--- "):
            name = line[4:].strip()
            current = name[2:] if name.startswith("a/") else None
        hunk = re.match(r"@@ -(\d+)(?:,(\d+))? ", line)
        if hunk and current:
            start, count = int(hunk.group(1)), int(hunk.group(2) or 1)
            ranges.setdefault(current, []).append((start, start + max(count, 1) - 1))
    for rel, spans in ranges.items():
        path = pristine / rel
        if not rel.endswith(".py") or not path.exists():
            continue
        try:
            tree = ast.parse(path.read_text())
        except SyntaxError:
            continue

        def walk(node: ast.AST, prefix: str, rel: str = rel, spans: list = spans) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    qual = f"{prefix}{child.name}"
                    end = getattr(child, "end_lineno", child.lineno) or child.lineno
                    if not isinstance(child, ast.ClassDef) and any(
                        s <= end and e >= child.lineno for s, e in spans
                    ):
                        out.add(f"{rel}::{qual}")
                    walk(child, qual + ".")

        walk(tree, "")
    return sorted(out)


def parse_cpus(spec: Any) -> int | list[int] | None:
    """A task's declared ``cpus``: a count (``4``), a CPU list (``[0, 1]``) or a set in
    ``taskset`` syntax (``"0-3,6"``); None when undeclared."""
    if spec is None or spec == "":
        return None
    if isinstance(spec, bool):
        raise ValueError(f"bad cpus {spec!r}")
    if isinstance(spec, int | float):
        return max(1, int(spec))
    if isinstance(spec, list | tuple):
        return sorted({int(c) for c in spec})
    text = str(spec).strip()
    if text.isdigit():
        return max(1, int(text))
    out: set[int] = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return sorted(out)


def cpu_plan(timer: str, cpus: Any = None, requested: int | None = None,
             allowed: list[int] | None = None) -> dict[str, Any]:
    """Where timing runs go and how many threads BLAS/OpenMP may use.

    CPU time (``process_cpu``, the default) pins every run to one CPU with one BLAS
    thread, as before. Wall-clock timing (``wall``) uses the task's declared CPU set
    (``cpus``: a count, taken from the highest allowed CPUs, or explicit CPUs) with that
    many threads, so a parallel optimisation can show its speedup; undeclared = one CPU.
    """
    allowed = sorted(allowed if allowed is not None else os.sched_getaffinity(0))
    # process_cpu and cycles: one pinned CPU (cycles are simulated, the pin only keeps the
    # slow valgrind run off the other CPU)
    declared = parse_cpus(cpus) if timer == "wall" else None
    note = ""
    if declared is None:
        chosen = [requested if requested in allowed else allowed[-1]]
    elif isinstance(declared, int):
        chosen = allowed[-declared:]
        if len(chosen) < declared:
            note = f"task declares {declared} cpus, only {len(chosen)} allowed"
    else:
        chosen = [c for c in declared if c in allowed]
        if len(chosen) < len(declared):
            note = f"declared cpus {declared} not all allowed (have {allowed})"
        chosen = chosen or allowed[-len(declared):]
    taskset = (["taskset", "-c", ",".join(map(str, chosen))]
               if shutil.which("taskset") is not None else [])
    return {"cpus": chosen, "threads": len(chosen), "taskset": taskset, "note": note}


def pin_cpu(requested: int | None) -> list[str]:
    """The one-CPU ``taskset`` prefix of the CPU-time timer (kept for callers)."""
    return list(cpu_plan("process_cpu", None, requested)["taskset"])


def thread_env(threads: int) -> dict[str, str]:
    n = str(max(1, threads))
    return dict(os.environ, OMP_NUM_THREADS=n, OPENBLAS_NUM_THREADS=n, MKL_NUM_THREADS=n,
                NUMBA_NUM_THREADS=n, VECLIB_MAXIMUM_THREADS=n, PYTHONHASHSEED="0",
                PYTHONDONTWRITEBYTECODE="1")


def _cv(values: list[float]) -> float:
    vals = [v for v in values if v is not None]
    if len(vals) < 2:
        return math.nan
    mean = sum(vals) / len(vals)
    if mean <= 0:
        return math.nan
    return math.sqrt(sum((v - mean) ** 2 for v in vals) / (len(vals) - 1)) / mean


def grade(cfg: dict[str, Any]) -> dict[str, Any]:
    repo, base = Path(cfg["repo"]), cfg.get("base_ref", "fc-base")
    work = Path(cfg.get("work", "/tmp/fc_grade"))
    python = cfg.get("python") or sys.executable
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    pristine = work / "_base"
    pristine.mkdir()
    archive = subprocess.run(["git", "archive", base], cwd=repo, capture_output=True, check=False)
    if archive.returncode != 0:
        return {"infra_error": f"cannot export base {base}: {archive.stderr.decode()[-500:]}"}
    subprocess.run(["tar", "-x", "-C", str(pristine)], input=archive.stdout, check=True)

    patches: dict[str, str] = {"baseline": "",
                               "expert": Path(cfg["expert_patch"]).read_text()}
    for name, spec in cfg.get("candidates", {}).items():
        if spec.get("from_repo"):
            patches[name] = agent_patch(repo, base)
        else:
            patches[name] = Path(spec["patch"]).read_text() if spec.get("patch") else ""
    controls = [c for c in cfg.get("controls", []) if c not in patches]
    for name in controls:  # a second copy of the base, timed only: calibrates the noise floor
        patches[name] = ""
    out: dict[str, Any] = {"load_before": os.getloadavg(), "trees": {}, "patches": patches}
    trees: dict[str, Path] = {}
    (work / "trees").mkdir()
    for i, (name, patch) in enumerate(patches.items()):
        dest = work / "trees" / f"{i:02d}"  # equal-length paths: the layout ignores names
        info = make_tree(pristine, dest, patch)
        out["trees"][name] = {"apply": info, "touched": touched_functions(pristine, patch)}
        if info["ok"]:
            trees[name] = dest
    listed = sh([python, str(BENCH), "list", str(pristine)], timeout=300)
    try:
        out["workloads"] = json.loads(listed.stdout)
    except ValueError:
        out["infra_error"] = f"benchmark discovery failed: {listed.stderr[-1500:]}"
        return out
    if not out["workloads"]:
        out["infra_error"] = "no benchmarks discovered"
        return out
    out["controls"] = controls
    for name, tree in trees.items():
        if name == "baseline" or name in controls:
            continue  # the gate compares candidates with the expert, never with the base
        out["trees"][name]["tests"] = run_tests(tree, python, cfg.get("test_timeout", 900))
    snaps: dict[str, Any] = {}
    snap_env = dict(os.environ, PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1")
    for name, tree in trees.items():
        if name in controls:
            continue
        snap = work / f"{name}.snap.pkl"
        done = sh([python, str(BENCH), "snapshot", str(tree), str(snap), "--timeout",
                   str(cfg.get("snapshot_timeout", 30))], timeout=cfg.get("bench_timeout", 900),
                  env=snap_env)
        snaps[name] = pickle.loads(snap.read_bytes()) if snap.exists() else {}
        if not snap.exists():
            out["trees"][name]["snapshot_error"] = done.stderr[-1500:]
    for name in trees:
        if name != "baseline" and name not in controls and "baseline" in snaps:
            out["trees"][name]["snapshot"] = verify(snaps["baseline"], snaps[name])
    timer = cfg.get("timer", "process_cpu")
    if timer == "cycles" and shutil.which(cfg.get("valgrind", "valgrind")) is None:
        out["infra_error"] = "the cycles timer needs valgrind, which is not installed here"
        return out
    plan = cpu_plan(timer, cfg.get("cpus"), cfg.get("cpu"))
    out.update(pinned=plan["taskset"], cpu_plan=plan)
    env = thread_env(plan["threads"])
    names = list(trees)
    rounds, repeat = int(cfg.get("rounds", 5)), int(cfg.get("repeat", 3))
    max_rounds = max(rounds, int(cfg.get("max_rounds", rounds)))
    cv_target = float(cfg.get("cv_target", 0.02))
    budget = float(cfg.get("calibration_budget", 300))
    bench_opts = ["--repeat", str(repeat), "--timer", timer, "--cv-target", str(cv_target),
                  "--budget", str(cfg.get("sample_budget", 1.0)),
                  "--max-repeat", str(cfg.get("max_repeat", 50))]
    for name in names:
        out["trees"][name].update(samples={}, round_medians={}, bench_errors={},
                                  sample_cv={}, cv={})
        if timer == "cycles":
            out["trees"][name]["cycles"] = {}
    t0 = time.time()
    only: list[str] | None = None
    r = 0
    while r < max_rounds:
        if r >= rounds:  # calibration: more rounds for the workloads still above target
            only = sorted({wl for name in names for wl, cv in
                           round_cvs(out["trees"][name], r).items()
                           if not (cv <= cv_target)})
            if not only or time.time() - t0 > budget:
                break
        _time_round(out, trees, names, r, only, work, python, bench_opts, env, cfg)
        r += 1
    for name in names:
        tree_out = out["trees"][name]
        for wl in tree_out["round_medians"]:
            tree_out["round_medians"][wl] += [None] * (r - len(tree_out["round_medians"][wl]))
        tree_out["cv"] = round_cvs(tree_out, r)
        tree_out["dispersion"] = round_dispersions(tree_out, r)
    out.update(timing_seconds=time.time() - t0, load_after=os.getloadavg(), rounds=r,
               layout_seed=cfg.get("layout_seed", 0),
               min_rounds=rounds, repeat=repeat, timer=timer, cv_target=cv_target)
    return out


def round_dispersions(tree_out: dict[str, Any], upto: int) -> dict[str, float]:
    """Per workload: CV of its per-round medians (the same code measured once a round)."""
    return {wl: _cv(vals[:upto]) for wl, vals in tree_out.get("round_medians", {}).items()}


def round_cvs(tree_out: dict[str, Any], upto: int) -> dict[str, float]:
    """Per workload: the CV of its measured value, i.e. the relative standard error over
    rounds (dispersion / sqrt(rounds measured)); what more rounds bring down."""
    out = {}
    for wl, vals in tree_out.get("round_medians", {}).items():
        n = sum(v is not None for v in vals[:upto])
        out[wl] = _cv(vals[:upto]) / math.sqrt(n) if n >= 2 else math.nan
    return out


def layout_env(env: dict[str, str], seed: Any, r: int, name: str | None) -> dict[str, str]:
    """``env`` plus this timing run's layout shift: ``FC_LAYOUT_SEED`` (heap padding in
    ``fc_bench``) and ``FC_ENV_PAD`` (0-4095 bytes of environment, which moves the stack),
    seeded by (``seed``, round, tree) so a rerun repeats them; ``name=None``: one layout
    for every tree of the round (the deterministic cycles timer)."""
    rng = random.Random(f"{seed}|{r}" if name is None else f"{seed}|{r}|{name}")
    return dict(env, FC_LAYOUT_SEED=str(rng.randrange(2**31)),
                FC_ENV_PAD="." * rng.randrange(4096))


def _time_round(out: dict[str, Any], trees: dict[str, Path], names: list[str], r: int,
                only: list[str] | None, work: Path, python: str, bench_opts: list[str],
                env: dict[str, str], cfg: dict[str, Any]) -> None:
    """One round: every tree once, order rotated each round and reversed every other."""
    k = r % len(names)
    order = names[k:] + names[:k]
    if r % 2:
        order.reverse()
    extra: list[str] = []
    if only is not None:
        only_file = work / f"only.r{r}.json"
        only_file.write_text(json.dumps(only))
        extra = ["--only", str(only_file)]
    cycles = out.get("timer", cfg.get("timer")) == "cycles"
    for name in order:
        res_file = work / f"{name}.r{r}.json"
        run_env = layout_env(env, cfg.get("layout_seed", 0), r, None if cycles else name)
        prefix: list[str] = []
        if cycles:
            cg_dir = work / f"cg.{name}.r{r}"
            cg_dir.mkdir(exist_ok=True)
            run_env["FC_CALLGRIND_OUT"] = str(cg_dir / "cg.%p")
            run_env.update(CYCLES_MALLOC_ENV)
            sys.path.insert(0, str(HERE))
            import fc_callgrind

            prefix = fc_callgrind.valgrind_prefix(run_env["FC_CALLGRIND_OUT"],
                                                  cfg.get("valgrind", "valgrind"))
        limit = float(cfg.get("bench_timeout", 900)) * (CYCLES_BENCH_FACTOR if cycles else 1)
        done = sh([*out["pinned"], *prefix, python, str(BENCH), "time", str(trees[name]),
                   str(res_file), *bench_opts, *extra], timeout=limit, env=run_env)
        if cycles:
            shutil.rmtree(work / f"cg.{name}.r{r}", ignore_errors=True)
        tree_out = out["trees"][name]
        if not res_file.exists():
            tree_out["bench_errors"]["*"] = done.stderr[-1500:]
            continue
        res = json.loads(res_file.read_text())
        tree_out["bench_errors"].update(res["errors"])
        if name == "baseline" or "workload_meta" not in out:
            meta = out.setdefault("workload_meta", {})
            for wl, info in res.get("meta", {}).items():
                meta.setdefault(wl, {k: info.get(k) for k in
                                     ("kind", "unit", "higher_is_better", "number")})
        for wl, values in res["samples"].items():
            tree_out["samples"].setdefault(wl, []).extend(values)
            medians = tree_out["round_medians"].setdefault(wl, [])
            medians += [None] * (r - len(medians))
            medians.append(sorted(values)[len(values) // 2])
            cv = res.get("meta", {}).get(wl, {}).get("cv")
            tree_out["sample_cv"].setdefault(wl, []).append(cv)
            counts = res.get("meta", {}).get(wl, {}).get("cycles")
            if counts is not None:
                tree_out.setdefault("cycles", {}).setdefault(wl, []).append(counts)


def main(argv: list[str]) -> int:
    cfg = json.loads(Path(argv[0]).read_text())
    try:
        result = grade(cfg)
    except Exception as exc:  # noqa: BLE001 - an infra failure, reported as such
        result = {"infra_error": f"grader crashed: {type(exc).__name__}: {exc}"}
    text = json.dumps(result, default=lambda o: None if isinstance(o, float) and math.isnan(o)
                      else str(o))
    print("FORMULACODE_RESULT_START")
    print(text)
    print("FORMULACODE_RESULT_END")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
