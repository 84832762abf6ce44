"""The in-container half of the FormulaCode grader (stdlib only; numpy used when present).

It measures and reports raw facts; the host (``environments.formulacode.metrics``) turns them
into speedups, advantages and the reward, so the arithmetic is unit-testable without docker.

    python3 fc_grade.py CONFIG.json        # prints FORMULACODE_RESULT_START ... _END

Steps (spec §5): build one tree per candidate from a pristine export of the base commit —
``baseline`` (nothing applied), ``expert`` (the PR's patch) and each candidate (an agent's
diff, or a patch file) — then restore the benchmark dir, the asv config and every test file
to the base version in every tree (agents cannot edit workloads or tests), run the tests in
each tree, capture benchmark return values on the baseline and verify the others against
them, and time all trees interleaved over rounds (order rotated each round) in the same
container, pinned to one CPU with ``taskset``. Each timing run is a fresh interpreter.
"""

from __future__ import annotations

import ast
import json
import math
import os
import pickle
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


def pin_cpu(requested: int | None) -> list[str]:
    if shutil.which("taskset") is None:
        return []
    allowed = sorted(os.sched_getaffinity(0))
    cpu = requested if requested in allowed else allowed[-1]
    return ["taskset", "-c", str(cpu)]


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
    out: dict[str, Any] = {"load_before": os.getloadavg(), "trees": {}, "patches": patches}
    trees: dict[str, Path] = {}
    for name, patch in patches.items():
        dest = work / name
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
    for name, tree in trees.items():
        if name == "baseline":
            continue  # the gate compares candidates with the expert, never with the base
        out["trees"][name]["tests"] = run_tests(tree, python, cfg.get("test_timeout", 900))
    snaps: dict[str, Any] = {}
    for name, tree in trees.items():
        snap = work / f"{name}.snap.pkl"
        done = sh([python, str(BENCH), "snapshot", str(tree), str(snap)], timeout=900)
        snaps[name] = pickle.loads(snap.read_bytes()) if snap.exists() else {}
        if not snap.exists():
            out["trees"][name]["snapshot_error"] = done.stderr[-1500:]
    for name in trees:
        if name != "baseline" and "baseline" in snaps:
            out["trees"][name]["snapshot"] = verify(snaps["baseline"], snaps[name])
    pin = pin_cpu(cfg.get("cpu"))
    out["pinned"] = pin
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               NUMBA_NUM_THREADS="1", PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1")
    names = list(trees)
    rounds, repeat = int(cfg.get("rounds", 5)), int(cfg.get("repeat", 3))
    for name in names:
        out["trees"][name].update(samples={}, round_medians={}, bench_errors={})
    t0 = time.time()
    for r in range(rounds):
        k = r % len(names)
        order = names[k:] + names[:k]
        if r % 2:
            order.reverse()
        for name in order:
            res_file = work / f"{name}.r{r}.json"
            done = sh([*pin, python, str(BENCH), "time", str(trees[name]), str(res_file),
                       "--repeat", str(repeat), "--timer", cfg.get("timer", "process")],
                      timeout=cfg.get("bench_timeout", 900), env=env)
            if not res_file.exists():
                out["trees"][name]["bench_errors"]["*"] = done.stderr[-1500:]
                continue
            res = json.loads(res_file.read_text())
            tree_out = out["trees"][name]
            tree_out["bench_errors"].update(res["errors"])
            for wl, values in res["samples"].items():
                tree_out["samples"].setdefault(wl, []).extend(values)
                middle = sorted(values)[len(values) // 2]
                tree_out["round_medians"].setdefault(wl, []).append(middle)
    out.update(timing_seconds=time.time() - t0, load_after=os.getloadavg(), rounds=rounds,
               repeat=repeat, timer=cfg.get("timer", "process"))
    return out


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
