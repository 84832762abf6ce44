"""The in-container grader run as a local subprocess on real pack tasks (no docker)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.formulacode.agents import patched_files, short_circuit
from benchmarks.formulacode.grading import evaluate
from environments.formulacode.grader import GradeSettings, grade_local
from environments.formulacode.pack import materialize, pack_record

FAST = GradeSettings(rounds=2, repeat=2, sample_budget=0.2)


def _broken_patch(slug: str, tmp: Path) -> str:
    """The ``break`` agent's change, built on a scratch copy."""
    record = pack_record(slug, 1)
    scratch = materialize(slug, tmp / "scratch")
    (tmp / "expert.patch").write_text(record["patch"])
    import subprocess

    subprocess.run(["git", "apply", str(tmp / "expert.patch")], cwd=scratch, check=True)
    for rel in patched_files(record["patch"]):
        path = scratch / rel
        path.write_text(short_circuit(path.read_text()))
    return subprocess.run(["git", "diff", "fc-base"], cwd=scratch, capture_output=True,
                          text=True, check=True).stdout


@pytest.mark.slow
def test_oracle_noop_and_break_on_a_pack_task(tmp_path: Path) -> None:
    slug = "linsolve"
    record = pack_record(slug, 1)
    repo = materialize(slug, tmp_path / "repo")
    (tmp_path / "noop.patch").write_text("")
    (tmp_path / "break.patch").write_text(_broken_patch(slug, tmp_path))
    (tmp_path / "oracle.patch").write_text(record["patch"])
    result = grade_local(repo, record["patch"], {
        "oracle": {"patch": str(tmp_path / "oracle.patch")},
        "noop": {"patch": str(tmp_path / "noop.patch")},
        "break": {"patch": str(tmp_path / "break.patch")},
    }, FAST, tmp_path / "work")
    oracle, noop, broken = (evaluate(result, c) for c in ("oracle", "noop", "break"))
    assert result["workloads"] and not oracle["infra_failure"]
    assert oracle["success"] and noop["success"]
    assert broken["gated"] and broken["failure"] == "tests failed" and broken["reward"] == -1
    assert broken["speedup"] == 1.0
    # one LU solve for all right-hand sides instead of an inverse and a product per row
    assert oracle["speedup"] > 1.05 and oracle["expert_speedup"] > 1.05
    assert oracle["num_valid_benchmarks"] == len(result["workloads"]) == 12
    assert result["trees"]["expert"]["touched"] == ["linsys/core.py::solve_many"]


@pytest.mark.slow
def test_edited_benchmarks_and_tests_are_restored(tmp_path: Path) -> None:
    slug = "dedup"
    record = pack_record(slug, 1)
    repo = materialize(slug, tmp_path / "repo")
    (repo / "benchmarks" / "bench_unique.py").write_text("# emptied by the agent\n")
    (repo / "tests" / "test_core.py").write_text("def test_nothing():\n    pass\n")
    (repo / "test_extra.py").write_text("def test_x():\n    pass\n")
    result = grade_local(repo, record["patch"], {"agent": {"from_repo": True}},
                         GradeSettings(rounds=1, repeat=1, sample_budget=0.1),
                         tmp_path / "work")
    agent = result["trees"]["agent"]
    assert agent["apply"]["ok"] and "added protected file test_extra.py" in agent["apply"]["tamper"]
    assert len(result["workloads"]) == 20 and len(agent["samples"]) == 20
    assert agent["tests"]["total"] == 2  # the base tests ran, not the agent's stub
