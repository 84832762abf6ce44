"""A committed row of the published dataset's schema, read and graded like a real task.

``data/formulacode_all_row.jsonl`` is one row in the paper-era ``formulacode/formulacode-all``
column set (spec §2.1, from the publisher's upload list ``_HF_COLUMNS`` in datasmith's
``scripts/prepare_formulacode_dataset.py``: task_id, repo_name, container_name, image_name,
difficulty, classification, patch, final_md, pr_merged_at, pr_merge_commit_sha,
pr_base_sha; ``pr_number`` is not uploaded). Its repository, ``data/hf_task/repo``, is a
small fixture package of this project (its PR: ``data/hf_task/solution``), committed with a
fixed identity so the row's shas are the real git shas of base and merge commits, and the
id and image name follow the publisher's derivations. The docker test that grades it
through the Inspect scorer is ``tests/benchmarks/formulacode/test_real_dataset.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest

from benchmarks.formulacode.grading import evaluate
from environments.formulacode.grader import GradeSettings, grade_local
from environments.formulacode.pack import expert_patch
from environments.formulacode.records import (
    container_to_image,
    load_records,
    task_id_from_container,
)

DATA = Path(__file__).parent / "data"
ROW = DATA / "formulacode_all_row.jsonl"
TASK = DATA / "hf_task"
HF_COLUMNS = ["task_id", "repo_name", "container_name", "image_name", "difficulty",
              "classification", "patch", "final_md", "pr_merged_at", "pr_merge_commit_sha",
              "pr_base_sha"]
IDENTITY = {"GIT_AUTHOR_NAME": "binstat", "GIT_AUTHOR_EMAIL": "dev@binstat.invalid",
            "GIT_COMMITTER_NAME": "binstat", "GIT_COMMITTER_EMAIL": "dev@binstat.invalid"}
BASE_DATE, MERGE_DATE = "2024-06-01T00:00:00Z", "2024-07-03T10:00:00Z"


def _git(repo: Path, *args: str, date: str = BASE_DATE) -> str:
    env = {**os.environ, **IDENTITY, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True,
                          check=True)
    return done.stdout.strip()


def base_repo(dest: Path) -> Path:
    """The fixture repository at its base commit, committed as the image's Dockerfile does
    (same identity and date, so the same sha); no ``fc-base`` tag, as in published images."""
    shutil.copytree(TASK / "repo", dest, ignore=shutil.ignore_patterns("__pycache__"))
    _git(dest, "init", "-q", "-b", "main")
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "-m", "base")
    return dest


def row() -> dict[str, object]:
    return dict(json.loads(ROW.read_text()))


def test_row_has_exactly_the_published_columns_and_derivations() -> None:
    r = row()
    assert list(r) == HF_COLUMNS
    assert r["container_name"] == f"binstat-dev-binstat-{r['pr_base_sha']}:final"
    assert r["image_name"] == container_to_image(str(r["container_name"]))
    assert r["task_id"] == task_id_from_container(str(r["container_name"]), 1)
    assert r["patch"] == expert_patch(TASK)  # the PR diff: repo -> solution


def test_row_shas_are_the_git_shas_of_base_and_merge(tmp_path: Path) -> None:
    r = row()
    repo = base_repo(tmp_path / "repo")
    assert _git(repo, "rev-parse", "HEAD") == r["pr_base_sha"]
    (tmp_path / "pr.patch").write_text(str(r["patch"]))
    _git(repo, "apply", str(tmp_path / "pr.patch"))
    _git(repo, "commit", "-q", "-am", "merge", date=MERGE_DATE)
    assert _git(repo, "rev-parse", "HEAD") == r["pr_merge_commit_sha"]


def test_snapshot_folder_of_parquet_loads_as_a_record(tmp_path: Path) -> None:
    """The dataset's on-disk layout: ``<config>/train-00000-of-00001.parquet`` with a
    timestamp merge date."""
    frame = pl.DataFrame([row()]).with_columns(
        pl.col("pr_merged_at").str.to_datetime(time_zone="UTC"))
    (tmp_path / "default").mkdir()
    frame.write_parquet(tmp_path / "default" / "train-00000-of-00001.parquet")
    (record,) = load_records(tmp_path)
    assert record.task_id == "binstat_dev-binstat_1" and record.pr_number is None
    assert record.classification == "use_lower_level_system" and record.difficulty == "easy"
    assert record.pr_merged_at.startswith("2024-07-03") and record.extra == {}
    assert record.patch == row()["patch"]


@pytest.mark.slow
def test_recorded_expert_patch_grades_locally(tmp_path: Path) -> None:
    """The in-container runtime on the fixture repo (tagged as ``prepare_repo`` tags a
    published image's HEAD): the recorded patch passes the gates and is faster."""
    (record,) = load_records(ROW)
    repo = base_repo(tmp_path / "repo")
    _git(repo, "tag", "fc-base", "HEAD")
    (tmp_path / "oracle.patch").write_text(record.patch)
    result = grade_local(repo, record.patch, {"oracle": {"patch": str(tmp_path / "oracle.patch")}},
                         GradeSettings(rounds=2, repeat=2, sample_budget=0.05),
                         tmp_path / "work")
    ev = evaluate(result, "oracle")
    assert not ev["infra_failure"] and ev["success"], ev["failure"]
    assert ev["num_valid_benchmarks"] == len(result["workloads"]) == 8
    assert ev["speedup"] > 1.05 and ev["expert_speedup"] > 1.05
    assert result["trees"]["oracle"]["touched"] == result["trees"]["expert"]["touched"]
