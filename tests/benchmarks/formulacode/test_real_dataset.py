"""Item 7 of issue 21: the real-dataset path, end to end, with a local image in place of the
published one.

The row (``tests/environments/formulacode/data/formulacode_all_row.jsonl``, the published
``formulacode/formulacode-all`` columns; see ``test_hf_record.py`` for its provenance) is
written as the dataset's parquet layout and loaded through ``dataset=PATH``, which is the
path real tasks take: the task keeps only rows whose ``image_name`` is in the local docker
store, runs each in a compose sandbox of that image, ``prepare_repo`` tags the image's HEAD
as the base, the oracle applies the recorded ``patch``, and the FormulaCode scorer grades it
in the container. The image is built offline from the base image and tagged with the row's
own ``image_name`` (``formulacode/all:binstat-dev-binstat-<base sha>--final``), exactly the
name a ``docker pull`` of the published image would give.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import polars as pl
import pytest

from harness.sandbox.docker import docker_status

DATA = Path(__file__).parents[2] / "environments" / "formulacode" / "data"
ROW = DATA / "formulacode_all_row.jsonl"
IMAGE_DIR = DATA / "hf_task"


def _docker_ready() -> None:
    st = docker_status()
    if not (st["daemon_running"] and st["compose_ok"] and st["base_image"]):
        pytest.skip(f"docker not ready: {st}")


def build_task_image(image: str) -> None:
    """``docker build`` of the stand-in image, offline, on ``$EVALSUITE_BASE_IMAGE``
    (layer-cached: a rebuild without changes takes seconds)."""
    base = os.environ.get("EVALSUITE_BASE_IMAGE", "evalsuite/base:bookworm")
    done = subprocess.run(
        ["docker", "build", "--network", "none", "--build-arg", f"BASE_IMAGE={base}",
         "-t", image, str(IMAGE_DIR)], capture_output=True, text=True, timeout=600,
        check=False)
    assert done.returncode == 0, done.stderr[-3000:]


def _head(image: str) -> str:
    done = subprocess.run(["docker", "run", "--rm", "--network", "none", image,
                           "git", "-C", "/workspace/repo", "rev-parse", "HEAD"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.docker
@pytest.mark.slow
def test_recorded_patch_grades_end_to_end_in_the_records_image(tmp_path: Path) -> None:
    _docker_ready()
    from inspect_ai import eval as inspect_eval

    from benchmarks.formulacode.agents import oracle
    from benchmarks.formulacode.formulacode import formulacode

    row = json.loads(ROW.read_text())
    build_task_image(row["image_name"])
    assert _head(row["image_name"]) == row["pr_base_sha"]  # the image is the record's base
    snapshot = tmp_path / "formulacode-all" / "default"
    snapshot.mkdir(parents=True)
    pl.DataFrame([row]).with_columns(
        pl.col("pr_merged_at").str.to_datetime(time_zone="UTC")
    ).write_parquet(snapshot / "train-00000-of-00001.parquet")

    task = formulacode(dataset=str(snapshot.parent), rounds=2, max_rounds=2, repeat=2,
                       sample_budget=0.05)
    sample = task.dataset[0]
    assert sample.id == row["task_id"] and sample.sandbox is not None
    log = inspect_eval(task, model="none", solver=oracle(), log_dir=str(tmp_path / "logs"),
                       display="none")[0]
    assert log.status == "success" and log.samples, log.error
    score = log.samples[0].scores["formulacode_scorer"]  # type: ignore[index]
    value = dict(score.value)  # type: ignore[arg-type]
    meta = score.metadata or {}
    assert value["infra_failure"] == 0.0 and value["success"] == 1.0, score.explanation
    assert meta["num_valid_benchmarks"] == meta["total_benchmarks"] == 8
    assert meta["tests"]["failed"] == 0 and meta["tests"]["total"] == 2
    assert meta["snapshot"]["status"] == "passed"
    # vectorised binning is faster on every workload; the oracle touches the expert's code
    assert value["speedup"] > 1.05 and meta["expert_speedup"] > 1.05
    assert value["triage"] == 1.0 and value["reward"] > 1.0
