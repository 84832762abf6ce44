"""The registering modules: each is listed in its package's ``_registry.py`` (or declared
by import path), and one that fails to import hides only itself and is shown as broken."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import benchmarks._registry as benchmark_registry
import methods._registry as method_registry
from harness import registry
from harness.cli import app

REPO = Path(__file__).resolve().parents[2]
DECORATORS = re.compile(r"^@(benchmark|scripted_policy|agent_method|editor|whitebox_method|"
                        r"recipe|plain_method|intervention|stack|registered)\(", re.M)


def test_every_decorated_module_is_imported_by_its_registry() -> None:
    listed = set(benchmark_registry.MODULES) | set(method_registry.MODULES)
    declared = {e.module for e in registry.entries()}
    missing = []
    for package in ("benchmarks", "methods"):
        for path in sorted((REPO / package).rglob("*.py")):
            if DECORATORS.search(path.read_text()):
                module = ".".join(path.relative_to(REPO).with_suffix("").parts)
                if module not in listed and module not in declared:
                    missing.append(module)
    assert not missing, f"decorated but never imported by a _registry.py: {missing}"


def test_a_broken_module_hides_only_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.plugins import core

    monkeypatch.setattr(core, "BROKEN", {})  # the machinery's own table, not the facade's name
    before = set(registry.names("benchmark"))
    registry.import_modules(["benchmarks.no_such_benchmark", "benchmarks.arithmetic.arithmetic"])
    assert set(registry.names("benchmark")) == before  # the good one is still there
    assert list(core.BROKEN) == ["benchmarks.no_such_benchmark"]
    assert core.BROKEN["benchmarks.no_such_benchmark"].startswith("ModuleNotFoundError")
    result = CliRunner().invoke(app, ["list", "--json"])
    assert result.exit_code == 0, result.output
    import json

    broken = json.loads(result.output)["broken"]
    assert broken == [{"name": "benchmarks.no_such_benchmark", "status": "broken",
                       "summary": core.BROKEN["benchmarks.no_such_benchmark"]}]
