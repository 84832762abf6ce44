"""The leaderboard on real Inspect logs: the arithmetic benchmark run by two scripted agents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from benchmarks.arithmetic.arithmetic import arithmetic
from harness.results import read_results
from leaderboards.build import build


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("arith-logs")
    for style in ("plain", "instructive"):
        logs = inspect_eval(arithmetic(n=12, seed=4, agent="generate", prompt_style=style),
                            model=["scripted/arith-oracle", "scripted/arith-left-to-right"],
                            log_dir=str(folder), display="none")
        assert all(log.status == "success" for log in logs)
    return folder


@pytest.mark.slow
def test_real_logs_give_one_row_per_model_and_setup(log_dir: Path, tmp_path: Path) -> None:
    paths = build(log_dir, tmp_path / "out")
    doc = json.loads(paths["json"].read_text())
    (bench,) = doc["benchmarks"]
    frame = read_results(log_dir)
    assert bench["n_items"] == 12 and len(bench["entries"]) == 4
    for entry in bench["entries"]:
        assert entry["setup"] in ("prompt_style=plain", "prompt_style=instructive")
        rows = frame.filter((frame["model"] == entry["model"])
                            & (frame["scorer"] == "exact_integer")
                            & frame["task_args"].str.contains(entry["setup"].split("=")[1]))
        assert entry["score"] == pytest.approx(rows["score_value"].fill_null(0).mean())
        assert entry["n"] == rows.height == 12
    oracle = [e for e in bench["entries"] if e["model"] == "scripted/arith-oracle"]
    assert all(e["rank"] == 1 and e["reference"] == "oracle" for e in oracle)
    assert all(e["normalised"] is None for e in bench["entries"])  # no floor agent here
    index = paths["site"].read_text()
    assert index.count('class="log"') == 4  # one link per real log
