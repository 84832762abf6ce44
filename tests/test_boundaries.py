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
# the bwrap sandbox also ships alone (harness/sandbox/pyproject.toml), so it has its own
SANDBOX_ADAPTER = REPO / "harness" / "sandbox" / "_inspect_compat.py"


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
        if path not in (ADAPTER, SANDBOX_ADAPTER)
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


def test_run_logs_are_tracked_only_under_a_logs_folder() -> None:
    """Issue 45: outputs live in a study's or board's ``logs/<run>/``; an Inspect log
    (``.eval``) or a run's console log (``.log``) anywhere else is an output without a home."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout: nothing is tracked to check")
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True,
                             check=True).stdout.splitlines()
    homeless = [p for p in tracked
                if Path(p).suffix in (".eval", ".log") and "logs" not in Path(p).parts[:-1]]
    assert not homeless, homeless[:5]


PACKAGES = ("harness", "benchmarks", "methods", "environments", "leaderboards")


def _modules(root: Path) -> dict[str, Path]:
    """Every module of the suite's packages under ``root``, by dotted name."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in (root / package).rglob("*.py"):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the suite's modules it imports, anywhere in its body: a function-local
    import is an arrow too (hiding a circle inside a function does not remove it)."""
    modules = _modules(root)

    def owner(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                           for a in node.names]
            for target in targets:
                found = owner(target)
                if found and found != name:
                    graph[name].add(found)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_import_graph_has_no_circle() -> None:
    """Two modules that import each other, even inside a function, are one module in two
    files: the shared piece belongs below both (issue 45)."""
    assert circles(import_graph(REPO)) == []


def test_the_circle_check_sees_a_circle_hidden_in_a_function(tmp_path: Path) -> None:
    package = tmp_path / "methods"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from methods.b import g\n\ndef f():\n    return g()\n")
    (package / "b.py").write_text("def g():\n    from methods.a import f\n    return f\n")
    (package / "c.py").write_text("from methods import a\n")
    assert circles(import_graph(tmp_path)) == [["methods.a", "methods.b"]]
