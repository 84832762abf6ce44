"""The plug-in kinds: one module each, one table of them, and no decorated module that its
package forgets to import.

A module that registers something with a kind's decorator but is missing from its package's
``_registry.MODULES`` registers nothing when the suite loads (its benchmark or method is
"unknown" everywhere but in the test that imported it by hand); the check reads the source,
so it cannot be fooled by an import that happened earlier in the same process.
"""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness import registry
from harness.plugins import PLUGIN_KINDS
from harness.plugins.core import KINDS

REPO = Path(__file__).resolve().parents[2]
DECORATOR_NAMES = set(registry.DECORATORS) - {"model_wrapper"}
PACKAGES = ("benchmarks", "methods")


def test_every_kind_has_one_plugin_module_with_its_decorator() -> None:
    assert list(PLUGIN_KINDS) == list(KINDS)
    for kind, info in PLUGIN_KINDS.items():
        module = importlib.import_module(info.module)
        name = info.decorator.strip("@").removesuffix("()")
        assert callable(getattr(module, name)), (kind, name)
        assert registry.DECORATORS[name] == info.module
        assert getattr(registry, name) is getattr(module, name)  # the one public face


def test_an_unknown_registry_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'agent_methods'"):
        registry.agent_methods  # noqa: B018


def registering_modules(root: Path, package: str) -> set[str]:
    """Modules of ``package`` that call a kind's decorator or ``register``/``declare`` at
    module level (a decorated definition or a top-level call)."""
    found = set()
    for path in (root / package).rglob("*.py"):
        if path.name == "_registry.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            calls: list[ast.expr] = []
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                calls = list(node.decorator_list)
            elif isinstance(node, ast.Expr):
                calls = [node.value]
            for call in calls:
                func = call.func if isinstance(call, ast.Call) else call
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name in DECORATOR_NAMES or name in ("register", "declare"):
                    parts = list(path.relative_to(root).with_suffix("").parts)
                    found.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


def imported_by(root: Path, package: str) -> set[str]:
    """The modules a package's ``_registry.py`` imports: its ``MODULES`` and its imports."""
    tree = ast.parse((root / package / "_registry.py").read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "MODULES" for t in targets):
                names.update(elt.value for elt in getattr(node.value, "elts", [])
                             if isinstance(elt, ast.Constant) and isinstance(elt.value, str))
    return names


def declared_modules() -> set[str]:
    """Modules a package declares by import path (``declare(kind, name, "module:attr")``:
    the entry is listed at load and its module imported on first use, because it needs an
    optional extra such as torch). Read in a fresh interpreter: in this one an earlier test
    may have loaded a declared entry, which replaces its path with the object."""
    code = ("from harness import registry; registry.load_plugins(); "
            "print('\\n'.join(sorted({str(e.obj).split(':')[0] for e in registry.entries() "
            "if isinstance(e.obj, str)})))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO.parent, capture_output=True,
                          text=True, check=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    return set(done.stdout.split())


@pytest.mark.parametrize("package", PACKAGES)
def test_every_registering_module_is_imported_by_its_package_registry(package: str) -> None:
    covered = imported_by(REPO, package) | declared_modules()
    missing = sorted(registering_modules(REPO, package) - covered)
    assert missing == [], f"add to {package}/_registry.py MODULES (or declare it): {missing}"


def test_the_check_finds_a_forgotten_module(tmp_path: Path) -> None:
    package = tmp_path / "methods"
    package.mkdir()
    (package / "_registry.py").write_text('MODULES: tuple[str, ...] = ("methods.listed",)\n')
    (package / "listed.py").write_text("@agent_method('a')\ndef a(): ...\n")
    (package / "forgotten.py").write_text(
        "from harness.registry import editor\n\n@editor('e')\nclass E: ...\n")
    (package / "plain.py").write_text("def helper():\n    return 1\n")
    assert registering_modules(tmp_path, "methods") - imported_by(tmp_path, "methods") == {
        "methods.forgotten"}
