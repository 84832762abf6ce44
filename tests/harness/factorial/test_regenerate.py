"""`harness study regenerate`: committed reports rebuilt from their logs, or checked.

The check is exercised on a real committed report (its logs are in the tree), on a tampered
copy of it (must differ, and say where), and on reports whose logs are not here or whose
command cannot be rerun (must fail loudly, never be skipped).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.factorial.report.regenerate import (
    comparable,
    compare,
    find_reports,
    first_difference,
    plan_for,
    regenerate,
    summary_line,
)

ROOT = Path(__file__).resolve().parents[3]
REPORT = "methods/studies/progressive_depth"


def test_recorded_commands_are_parsed() -> None:
    plan = plan_for("harness study report a/logs --out a/b --score-key x/y "
                    "--headline-factor agent")
    assert plan.kind == "report" and plan.log_dir == Path("a/logs")
    assert plan.recorded_out == Path("a/b")
    assert plan.options == {"score_key": "x/y", "headline_factor": "agent"}
    module = plan_for("python -m methods.mvrcache.mvrcache_summary L --out R")
    assert module.kind == "module" and module.log_dir == Path("L")
    assert module.recorded_out == Path("R")
    assert plan_for("bash make.sh").kind == "unsupported"
    with pytest.raises(ValueError, match="--bogus"):
        plan_for("harness study report L --bogus 1")


def test_floats_agree_to_rounding_and_everything_else_exactly() -> None:
    base = {"F": 112.14924410227685, "se": 1.1e-10, "n": 3, "levels": ["a", "b"]}
    assert first_difference(base, {**base, "F": 112.14924410229332, "se": 1.9e-18}) is None
    assert first_difference(base, {**base, "F": 56.9}) == ".F: committed '112.14924410227685', " \
        "regenerated '56.9'"
    assert first_difference(base, {**base, "n": 4}) is not None
    assert first_difference(base, {**base, "levels": ["b", "a"]}) == \
        ".levels[0]: committed 'a', regenerated 'b'"
    assert first_difference({"x": float("nan")}, {"x": float("nan")}) is None
    assert first_difference({"x": None}, {"x": 0.0}) is not None


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    """A scratch repository holding one committed report and its logs."""
    target = tmp_path / REPORT
    shutil.copytree(ROOT / REPORT, target)
    return tmp_path


@pytest.mark.slow
def test_a_committed_report_regenerates_identically(tree: Path) -> None:
    outcomes = regenerate(tree / "methods/studies", tree, check=True)
    assert [(o.status, o.detail) for o in outcomes] == [("same", "")]
    assert summary_line(outcomes) == "1 reports: 1 same"


@pytest.mark.slow
def test_a_tampered_report_differs_and_says_where(tree: Path) -> None:
    path = tree / REPORT / "report.json"
    data = json.loads(path.read_text())
    data["title"] = data["title"] + " (edited)"
    path.write_text(json.dumps(data))
    [outcome] = regenerate(tree / "methods/studies", tree, check=True)
    assert outcome.status == "differs" and not outcome.ok
    assert outcome.detail.startswith(".title: committed")


@pytest.mark.slow
def test_rewriting_in_place_restores_a_tampered_report(tree: Path) -> None:
    path = tree / REPORT / "report.json"
    original = json.loads(path.read_text())
    (tree / REPORT / "report.md").unlink()
    path.write_text(json.dumps({**original, "title": "edited"}))
    [outcome] = regenerate(tree / "methods/studies", tree, check=False)
    assert outcome.status == "rewritten"
    assert (tree / REPORT / "report.md").is_file()
    assert compare(tree / REPORT, tree / REPORT).status == "same"
    rebuilt = json.loads(path.read_text())
    assert rebuilt["title"] == original["title"]
    assert first_difference(comparable(original), comparable(rebuilt)) is None


def test_missing_logs_and_unknown_commands_are_failures_not_skips(tree: Path) -> None:
    shutil.rmtree(tree / REPORT / "logs")
    odd = tree / "methods/studies/odd"
    odd.mkdir()
    (odd / "report.json").write_text(json.dumps(
        {"provenance": {"report_command": "bash make_it.sh"}}))
    bare = tree / "methods/studies/bare"
    bare.mkdir()
    (bare / "report.json").write_text(json.dumps({"provenance": {}}))
    outcomes = regenerate(tree / "methods/studies", tree, check=True)
    assert {o.report.name: o.status for o in outcomes} == {
        "progressive_depth": "missing-logs", "odd": "unsupported",
        "bare": "unsupported"}
    assert not any(o.ok for o in outcomes)


def test_every_committed_method_report_records_how_it_was_made() -> None:
    folders = find_reports(ROOT / "methods/studies")
    assert len(folders) >= 20
    for folder in folders:
        command = json.loads((folder / "report.json").read_text())["provenance"].get(
            "report_command")
        assert command and plan_for(command).kind != "unsupported", folder
