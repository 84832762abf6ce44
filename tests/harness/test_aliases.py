"""Old homes of moved method modules still resolve (harness.plugins.aliases, issue 45).

Committed logs, study files and recorded report commands name per-paper modules where they
lived before they moved into ``methods/<paper>/``; every lookup that takes such a spec must
reach the new module, with a one-line note, and nothing may stay behind at the old home.
"""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import pytest

from harness.plugins.aliases import MOVED, MovedPathWarning, new_module, resolve

ROOT = Path(__file__).resolve().parents[2]


def _file(dotted: str) -> Path:
    return ROOT / dotted.replace(".", "/")


@pytest.mark.parametrize(("old", "new"), [
    ("methods.kv.xkv", "methods.xkv.xkv"),
    ("methods.kv.xkv:XKV", "methods.xkv.xkv:XKV"),
    ("methods/kv/xkv.py", "methods/xkv/xkv.py"),
    ("methods/agents/lightwm/agent.py@lightwm", "methods/lightwm/agent.py@lightwm"),
    ("methods.agents.lightwm.study_summary", "methods.lightwm.study_summary"),
    ("methods/agents/lightwm_schemas/", "methods/lightwm/schemas/"),
    ("methods.agents.evolve.database:Database", "methods.thetaevolve.evolve.database:Database"),
    ("methods.models.mvrcache_summary", "methods.mvrcache.mvrcache_summary"),
])
def test_an_old_spec_resolves_to_the_new_home_with_a_note(old: str, new: str) -> None:
    with pytest.warns(MovedPathWarning, match="moved to"):
        assert resolve(old) == new


@pytest.mark.parametrize("spec", [
    "methods.kv.cache", "methods/kv/cache.py", "methods.kv.scd_x",  # a longer name, unmoved
    "methods.agents.memory_react:task_react", "benchmarks/causalgame/agents.py@oracle",
    "harness/arithmetic", "react",
])
def test_an_unmoved_spec_comes_back_unchanged_and_silent(spec: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert resolve(spec) == spec


def test_every_new_home_exists_and_no_old_home_is_left_behind() -> None:
    """No re-export shim: the old module (or package) is gone, the new one is there."""
    for old, new in MOVED.items():
        assert not _file(old).with_suffix(".py").exists() and not _file(old).exists(), old
        assert _file(new).with_suffix(".py").is_file() or _file(new).is_dir(), new
        assert new_module(old) == new


def test_an_old_import_path_loads_the_moved_object() -> None:
    """The registry's ``module:attr`` lookup (declared plug-ins, solver levels)."""
    from harness.registry import resolve_target
    from methods.thetaevolve.evolve.database import Database

    with pytest.warns(MovedPathWarning):
        assert resolve_target("methods.agents.evolve.database:Database") is Database
    with pytest.warns(MovedPathWarning):  # inspect eval's file.py@name form
        assert resolve_target("methods/agents/evolve/database.py@Database") is Database


def test_a_study_solver_level_by_its_old_file_path_builds_the_agent() -> None:
    """A study file's solver level names the old file (``path.py@name``, as ``--solver``)."""
    from harness.factorial.cells import resolve_solver

    with pytest.warns(MovedPathWarning, match="methods/lightwm/agent.py@lightwm"):
        solver = resolve_solver({"name": "methods/agents/lightwm/agent.py@lightwm",
                                 "args": {"schema": "causalgame"}})
    assert callable(solver)


def test_a_scripted_policy_module_by_its_old_name_registers_the_policy() -> None:
    from inspect_ai.model import get_model

    with pytest.warns(MovedPathWarning, match="methods.lightwm.policies"):
        model = get_model("scripted/lightwm-experimenter",
                          policy_module="methods.agents.lightwm_policies")
    assert model.name == "lightwm-experimenter"


def test_a_report_recorded_with_an_old_module_compares_equal_to_its_rebuild() -> None:
    """``regenerate --check`` reads a recorded ``python -m OLD`` as the new module, which is
    what the rebuilt report records; any other difference in the command still counts."""
    from harness.factorial.report.regenerate import comparable, first_difference

    def report(command: str) -> dict[str, object]:
        return {"provenance": {"report_command": command}, "x": 1.0}

    old = report("python -m methods.models.mvrcache_summary L --out R")
    new = report("python -m methods.mvrcache.mvrcache_summary L --out R")
    other = report("python -m methods.mvrcache.mvrcache_summary L2 --out R")
    assert first_difference(comparable(old), comparable(new)) is None
    assert first_difference(comparable(old), comparable(other)) is not None


def test_moved_modules_are_importable_by_their_new_names() -> None:
    """The table names real modules (no typo that would make an alias point nowhere)."""
    for new in MOVED.values():
        if _file(new).with_suffix(".py").is_file() or (_file(new) / "__init__.py").is_file():
            assert importlib.util.find_spec(new) is not None, new


def test_a_recorded_summary_command_with_an_old_module_runs_the_new_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``regenerate`` reruns a recorded ``python -m OLD ... --out DIR`` as the new module."""
    import subprocess

    from harness.factorial.report import regenerate

    ran: list[list[str]] = []

    def fake_run(words: list[str], **_: object) -> subprocess.CompletedProcess[str]:
        ran.append(words)
        return subprocess.CompletedProcess(words, 0, "", "")

    monkeypatch.setattr(regenerate.subprocess, "run", fake_run)
    plan = regenerate.Plan("python -m methods.agents.lightwm.study_summary L --out S",
                           "module", None)
    with pytest.warns(MovedPathWarning):
        regenerate._run_module(plan, tmp_path / "out", tmp_path)
    assert ran[0][1:] == ["-m", "methods.lightwm.study_summary", "L", "--out",
                          str(tmp_path / "out")]
