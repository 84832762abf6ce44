"""The architecture's boundaries, checked on the source tree (``../shared/ARCHITECTURE.md``).

``lint-imports`` runs the import contracts of ``pyproject.toml`` (environments import no
Inspect or harness; harness imports no benchmark, method or leaderboard outside its CLI/demo
shell; methods import no benchmark or environment; benchmarks import no method). The AST
check keeps private Inspect imports (``inspect_ai._*`` and ``inspect_ai.x._y``) inside the
one adapter module that documents each use.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("harness", "benchmarks", "environments", "methods", "leaderboards", "tests")
ADAPTER = REPO / "harness" / "inspect_compat.py"


def _private_inspect_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        modules: list[str] = []
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules = [node.module]
        for module in modules:
            parts = module.split(".")
            if parts[0] == "inspect_ai" and any(p.startswith("_") for p in parts[1:]):
                found.append(f"{path}:{node.lineno}: {module}")
    return found


@pytest.mark.slow
def test_private_inspect_api_only_in_the_adapter() -> None:
    offenders = [
        hit
        for package in PACKAGES
        for path in sorted((REPO / package).rglob("*.py"))
        if path != ADAPTER
        for hit in _private_inspect_imports(path)
    ]
    assert offenders == [], "private Inspect imports outside harness/inspect_compat.py"


def test_the_adapter_check_sees_private_imports(tmp_path: Path) -> None:
    # the check itself must be able to fail: both spellings of a private import are caught
    probe = tmp_path / "probe.py"
    probe.write_text("from inspect_ai._util.registry import registry_find\n"
                     "import inspect_ai.model._model_call\nfrom inspect_ai import Task\n")
    assert len(_private_inspect_imports(probe)) == 2


def _lint_imports() -> str:
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.fail("lint-imports is not installed: pip install -e '.[dev]' (import-linter)")
    return exe


def test_import_contracts_hold() -> None:
    done = subprocess.run([_lint_imports(), "--no-cache"], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout or " broken" not in done.stdout.split("Contracts:")[-1]


def test_import_contracts_catch_a_back_edge() -> None:
    # a harness module that imports a benchmark breaks the contract (the linter can fail)
    probe = REPO / "harness" / "_boundary_probe.py"
    probe.write_text("import benchmarks.arithmetic.arithmetic  # noqa: F401\n")
    try:
        done = subprocess.run([_lint_imports(), "--no-cache"], cwd=REPO, capture_output=True,
                              text=True, timeout=300)
    finally:
        probe.unlink()
    assert done.returncode != 0
    assert "harness._boundary_probe -> benchmarks" in done.stdout


def test_no_inspect_run_debris_is_tracked() -> None:
    """Inspect's eval-set bookkeeping (``.eval-set-id``, ``eval-set.json``, ``logs.json``)
    is rebuilt by the next run; committed, it only goes stale (``.gitignore`` lists it)."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout: nothing is tracked to check")
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True,
                             check=True).stdout.splitlines()
    debris = [p for p in tracked
              if Path(p).name in (".eval-set-id", "eval-set.json", "logs.json")]
    assert not debris, debris[:5]
