"""Record schema: both published variants, local files, id/image derivation."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from environments.formulacode.pack import pack_records
from environments.formulacode.records import (
    container_to_image,
    load_records,
    normalize,
    task_id_from_container,
)

SHA = "a" * 40
PAPER_ROW = {
    "task_id": "pandas_dev-pandas_15", "repo_name": "pandas-dev/pandas",
    "container_name": f"pandas-dev-pandas-{SHA}:final",
    "image_name": f"formulacode/all:pandas-dev-pandas-{SHA}--final",
    "difficulty": "Difficulty.MEDIUM", "classification": "use_better_algorithm",
    "patch": "diff --git a/x b/x\n", "final_md": "Groupby is slow.",
    "pr_merged_at": "2024-07-03T10:00:00Z", "pr_merge_commit_sha": "b" * 40,
    "pr_base_sha": SHA,
}
HARBOR_ROW = {
    "owner": "shapely", "repo": "shapely", "issue_number": 2032, "task_id": 2032,
    "gt_hash": "c" * 40, "base_commit": SHA, "date": "2024-05-01",
    "instructions": "Buffer is slow.", "classification": "", "container_name": "",
    "patch": "diff --git a/y b/y\n", "image_name": "",
}


def test_paper_schema_maps_fields_and_normalises_labels() -> None:
    rec = normalize(PAPER_ROW)
    assert rec.task_id == "pandas_dev-pandas_15"
    assert rec.pr_base_sha == SHA and rec.final_md == "Groupby is slow."
    assert rec.difficulty == "medium"  # enum prefix stripped, lowercased
    assert rec.pr_number is None  # absent column stays absent


def test_harbor_schema_maps_onto_paper_names() -> None:
    rec = normalize(HARBOR_ROW)
    assert rec.final_md == "Buffer is slow." and rec.pr_base_sha == SHA
    assert rec.pr_merge_commit_sha == "c" * 40 and rec.pr_number == 2032
    assert rec.task_id == "2032" and rec.repo_name == "shapely/shapely"
    assert rec.classification == "uncategorized" and rec.difficulty == "hard"
    assert rec.image_name == container_to_image(f"shapely-shapely-{SHA}:final")


def test_task_id_derivation_matches_the_publisher_example() -> None:
    assert task_id_from_container(f"pandas-dev-pandas-{SHA}:final", 15) == "pandas_dev-pandas_15"
    assert task_id_from_container(f"astropy-astropy-{SHA}:final", 21) == "astropy_astropy_21"


def test_missing_patch_is_an_error() -> None:
    row = dict(PAPER_ROW)
    del row["patch"]
    with pytest.raises(KeyError):
        normalize(row)


def test_parquet_and_jsonl_round_trip(tmp_path: Path) -> None:
    rows = pack_records()[:3]
    pl.DataFrame(rows).write_parquet(tmp_path / "train.parquet")
    (tmp_path / "tasks.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    from_parquet = load_records(tmp_path / "train.parquet")
    from_jsonl = load_records(tmp_path / "tasks.jsonl")
    assert [r.task_id for r in from_parquet] == [r["task_id"] for r in rows]
    assert from_parquet == from_jsonl
    assert from_parquet[0].extra["pack_slug"] == rows[0]["pack_slug"]


def test_unknown_source_is_a_clear_error() -> None:
    with pytest.raises(FileNotFoundError):
        load_records("./no/such/file.parquet")
