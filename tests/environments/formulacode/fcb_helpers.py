"""Tiny asv suites written into tmp_path, and the runner started on them as a subprocess
(as the grader starts it: the suite's ``benchmarks`` package must not meet this project's)."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

RUNTIME = Path(__file__).parents[3] / "environments" / "formulacode" / "runtime"
FC_BENCH = RUNTIME / "fc_bench.py"


def make_suite(root: Path, benches: dict[str, str], package: dict[str, str] | None = None,
               bench_dir: str = "benchmarks") -> Path:
    """A tree with ``asv.conf.json``, ``<bench_dir>/<name>.py`` and optional package files."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "asv.conf.json").write_text(json.dumps({"version": 1, "benchmark_dir": bench_dir}))
    (root / bench_dir).mkdir(exist_ok=True)
    (root / bench_dir / "__init__.py").write_text("")
    for name, text in benches.items():
        (root / bench_dir / f"{name}.py").write_text(textwrap.dedent(text))
    for rel, text in (package or {}).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return env


def run_time(tree: Path, *args: str) -> dict[str, Any]:
    out = tree.parent / f"{tree.name}.time.json"
    done = subprocess.run([sys.executable, str(FC_BENCH), "time", str(tree), str(out), *args],
                          capture_output=True, text=True, env=_env(), timeout=120)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(out.read_text()))


def run_snapshot(tree: Path, *args: str) -> dict[str, Any]:
    out = tree.parent / f"{tree.name}.snap.pkl"
    done = subprocess.run([sys.executable, str(FC_BENCH), "snapshot", str(tree), str(out),
                           *args], capture_output=True, text=True, env=_env(), timeout=120)
    assert done.returncode == 0, done.stderr
    return dict(pickle.loads(out.read_bytes()))


def run_list(tree: Path) -> list[str]:
    done = subprocess.run([sys.executable, str(FC_BENCH), "list", str(tree)],
                          capture_output=True, text=True, env=_env(), timeout=60)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout))


def git_repo(tree: Path) -> Path:
    """Make ``tree`` a git repository whose first commit is tagged ``fc-base``."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t.invalid"}
    for cmd in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"],
                ["git", "commit", "-q", "-m", "base"], ["git", "tag", "fc-base"]):
        subprocess.run(cmd, cwd=tree, env=env, check=True, capture_output=True)
    return tree


def load_runtime(name: str) -> Any:
    """A runtime module (``fc_grade``/``fc_bench``) imported from its file."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"_fc_rt_{name}", RUNTIME / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
