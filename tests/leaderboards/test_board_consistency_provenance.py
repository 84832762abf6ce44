"""Boards carry consistency across trials and provenance (issue 51 items 3 and 5).

Synthetic logs with known per-epoch outcomes: every expected number is worked out by hand
below. Provenance: two boards over logs that differ only in what their run recorded (the
task file's hash) or in the data under the same ids get different digests; the same logs
in another folder get the same digest.
"""

from __future__ import annotations

import hashlib
import html
import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import polars as pl
import pytest
import yaml
from _lb_synth import write_log
from typer.testing import CliRunner

from harness.cli import app
from harness.provenance import source_sha256
from harness.stats import binary_mean_ci
from leaderboards.build import build
from leaderboards.exports import SCHEMA_PATH
from leaderboards.runs.__main__ import Run, launch_provenance, with_provenance

# per item, the outcome of epochs 1..3 (epoch-major in the log: all items of epoch 1, ...)
TRIALS = {"item-000": [1, 1, 1], "item-001": [1, 0, 1], "item-002": [0, 0, 1]}
EPOCH_MAJOR = [TRIALS[i][e] for e in range(3) for i in sorted(TRIALS)]


def _doc(out: Path) -> dict[str, Any]:
    return dict(json.loads((out / "leaderboard.json").read_text()))


def _entries(doc: dict[str, Any], bench: str) -> dict[str, dict[str, Any]]:
    found = next(b for b in doc["benchmarks"] if b["name"] == bench)
    return {e["model"]: e for e in found["entries"]}


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("consistency")
    logs = root / "logs"
    write_log(logs, "a", model="m/a", scores=EPOCH_MAJOR, epochs=3)
    write_log(logs, "b", model="m/b", scores=[1, 0, 1])
    write_log(logs, "pts", model="m/a", scores=[0.5, 0.2, 0.7, 0.4, 0.2, 0.9], epochs=2,
              task="synth/points")
    build(logs, root / "out")
    return root / "out"


def test_flip_rate_and_pass_hat_k_match_the_hand_count(board: Path) -> None:
    doc = _doc(board)
    jsonschema.validate(doc, json.loads(SCHEMA_PATH.read_text()))
    a = _entries(doc, "synth/bench")["m/a"]
    # pairs of trials per item: 3; differing pairs: item-000 0, item-001 2, item-002 2
    assert a["flip_pairs"] == 9 and a["flip_items"] == 3
    assert a["flip_rate"] == pytest.approx(4 / 9)
    assert a["trials"] == a["trials_max"] == 3
    assert a["pass_hat_k"] == pytest.approx(1 / 3)  # only item-000 passes all three
    assert a["pass_at_k"] == pytest.approx(1.0)  # every item passes at least once
    # the interval: the 9 pair outcomes clustered by item, Wilson on the effective n
    pairs = np.array([0, 0, 0, 1, 0, 1, 1, 0, 1], dtype=float)
    est = binary_mean_ci(pairs, cluster=np.repeat([0, 1, 2], 3))
    assert (a["flip_lo"], a["flip_hi"]) == pytest.approx((est.lo, est.hi))
    assert 0 < a["flip_lo"] < 4 / 9 < a["flip_hi"] < 1
    assert "3 trials on 3 items" in a["consistency_basis"]
    # the mean stays the mean over samples x epochs
    assert a["score"] == pytest.approx(6 / 9)


def test_entries_with_nothing_to_compare_say_why(board: Path) -> None:
    doc = _doc(board)
    b = _entries(doc, "synth/bench")["m/b"]
    assert b["flip_rate"] is None and b["trials"] == 1
    assert b["consistency_basis"] == "one trial per item: nothing to compare"
    points = _entries(doc, "synth/points")["m/a"]
    assert points["flip_rate"] is None and points["trials"] == 2
    assert points["consistency_basis"].startswith("not a 0/1 score")


def test_the_column_is_on_the_site_the_markdown_and_the_csv(board: Path) -> None:
    a = _entries(_doc(board), "synth/bench")["m/a"]
    cell = (f"{a['flip_rate']:.3f} [{a['flip_lo']:.3f}, {a['flip_hi']:.3f}] "
            "(k=3, pass^k 0.33)")
    markdown = (board / "leaderboard.md").read_text()
    assert cell in markdown and "flips [95% CI] (trials, pass^k)" in markdown
    page = html.unescape((board / "synth-bench.html").read_text())
    assert f'class="flips" title="{a["consistency_basis"]}">{a["flip_rate"]:.3f}' in page
    assert f"(k=3, pass^k {a['pass_hat_k']:.2f})" in page
    csv = pl.read_csv(board / "entries.csv").filter(pl.col("model") == "m/a",
                                                    pl.col("benchmark") == "synth/bench")
    assert csv["flip_rate"][0] == pytest.approx(4 / 9)


def _record(task_sha: str) -> dict[str, Any]:
    return {"packages": {"python": "3.11", "platform": "Linux-x"},
            "task_files": {"path": "task.py", "sha256": task_sha}}


def _provenance_board(root: Path, name: str, *, task_sha: str = "a" * 64,
                      inputs: tuple[str, ...] = ("x", "y", "z")) -> dict[str, Any]:
    logs = root / name / "logs"
    write_log(logs, "run", model="m/a", scores=[1, 0, 1], inputs=list(inputs),
              metadata={"provenance": _record(task_sha)})
    build(logs, root / name / "out")
    return _doc(root / name / "out")


def test_a_changed_task_file_or_dataset_changes_the_board_provenance(tmp_path: Path) -> None:
    base = _provenance_board(tmp_path, "base")
    entry = _entries(base, "synth/bench")["m/a"]
    [log] = base["logs"]
    assert entry["provenance"]["logs"] == entry["provenance"]["recorded"] == 1
    assert log["provenance"]["recorded"]["task_files"]["sha256"] == "a" * 64
    assert log["provenance"]["data_sha256"]
    # the same logs elsewhere: the same digest (no path or build time in it)
    shutil.copytree(tmp_path / "base" / "logs", tmp_path / "copy" / "logs")
    build(tmp_path / "copy" / "logs", tmp_path / "copy" / "out")
    same = _entries(_doc(tmp_path / "copy" / "out"), "synth/bench")["m/a"]["provenance"]
    assert same == entry["provenance"]
    page = html.unescape((tmp_path / "base/out/synth-bench.html").read_text())
    digest = entry["provenance"]["sha256"]
    assert f'<code title="{digest}: 1 log(s), 1 with a launch record">{digest[:10]}<' in page
    # the task file the run recorded changed: another digest
    edited = _entries(_provenance_board(tmp_path, "edited", task_sha="b" * 64),
                      "synth/bench")["m/a"]["provenance"]
    assert edited["sha256"] != entry["provenance"]["sha256"]
    # the data under the same ids changed, nothing recorded says so: another digest
    data = _provenance_board(tmp_path, "data", inputs=("x", "y", "changed"))
    assert data["logs"][0]["provenance"]["data_sha256"] != log["provenance"]["data_sha256"]
    assert (_entries(data, "synth/bench")["m/a"]["provenance"]["sha256"]
            != entry["provenance"]["sha256"])
    # the kernel build string is not a difference in what ran
    again = _provenance_board(tmp_path, "again")
    assert (_entries(again, "synth/bench")["m/a"]["provenance"]
            == entry["provenance"])


def test_exports_carry_the_provenance(tmp_path: Path) -> None:
    doc = _provenance_board(tmp_path, "base")
    entry = _entries(doc, "synth/bench")["m/a"]
    [record] = [json.loads(p.read_text()) for p in (tmp_path / "base/out/eee").glob("*.json")]
    details = record["source_metadata"]["additional_details"]
    assert details["provenance_sha256"] == entry["provenance"]["sha256"]
    assert json.loads(details["provenance"])[0]["recorded"]["task_files"]["sha256"] == "a" * 64
    # harness eee (per-log datastore files): the log's own digest
    out = tmp_path / "eee"
    result = CliRunner().invoke(app, ["eee", str(tmp_path / "base/logs"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    [aggregate] = [json.loads(p.read_text()) for p in out.glob("data/*/*/*/*.json")]
    extra = aggregate["source_metadata"]["additional_details"]
    assert extra["provenance_sha256"] == doc["logs"][0]["provenance"]["sha256"]


def test_board_runs_record_the_task_source_at_launch(tmp_path: Path) -> None:
    task = tmp_path / "task.py"
    task.write_text("X = 1\n")
    run = Run("plain", "m", ["inspect", "eval", f"{task}@t", "--model", "mockllm/model"],
              tmp_path / "logs", task=f"{task}@t", model="mockllm/model")
    record = launch_provenance(run)
    assert record["task_files"]["sha256"] == hashlib.sha256(b"X = 1\n").hexdigest()
    assert record["packages"]["inspect_ai"]
    argv = with_provenance(run)
    assert argv[:-2] == run.argv and argv[-2] == "--metadata"
    key, _, value = argv[-1].partition("=")
    # what Inspect does with a --metadata value (inspect_ai._util.config.parse_cli_args)
    assert key == "provenance" and yaml.safe_load(value) == json.loads(json.dumps(record))
    task.write_text("X = 2\n")
    assert launch_provenance(run)["task_files"]["sha256"] != record["task_files"]["sha256"]


def test_a_task_folder_hash_ignores_caches_and_sees_edits(tmp_path: Path) -> None:
    folder = tmp_path / "bench"
    (folder / "__pycache__").mkdir(parents=True)
    (folder / "task.py").write_text("A = 1\n")
    first = source_sha256(folder)
    (folder / "__pycache__" / "task.cpython-311.pyc").write_bytes(b"\x00")
    (folder / ".hidden").write_text("x")
    assert source_sha256(folder) == first
    (folder / "data.yaml").write_text("k: v\n")
    assert source_sha256(folder) != first


PLAIN_TASK = '''
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import match
from inspect_ai.solver import Generate, TaskState, solver


@solver
def alternate():
    """Right on item i in epoch e when i + e is even: every item flips once in 2 epochs."""
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        right = (int(str(state.sample_id)[1:]) + state.epoch) % 2 == 0
        state.output = ModelOutput.from_content("none", state.target.text if right else "-")
        return state
    return solve


@task
def arith() -> Task:
    return Task(dataset=[Sample(id=f"q{i}", input=f"{i} + {i}?", target=str(2 * i))
                         for i in range(3)], scorer=match())
'''


@pytest.mark.slow
def test_a_board_run_records_provenance_and_its_board_shows_it(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    """The runner end to end: `inspect eval` with the launch record, then the board."""
    from leaderboards.runs.__main__ import main

    monkeypatch.chdir(tmp_path)
    Path("plain_task.py").write_text(PLAIN_TASK)
    digests = []
    for root in ("logs_a", "logs_b"):
        Path("board.yaml").write_text(
            f"log_root: {root}\nruns:\n  - name: plain\n    task: plain_task.py@arith\n"
            "    flags: ['--epochs', '2']\n    agents: [plain_task.py@alternate]\n")
        assert main(["board.yaml"]) == 0
        assert main(["board.yaml", "--build", f"out_{root}"]) == 0
        doc = _doc(Path(f"out_{root}"))
        [log] = doc["logs"]
        recorded = log["provenance"]["recorded"]
        assert recorded["task_files"] == {
            "path": "plain_task.py",
            "sha256": hashlib.sha256(Path("plain_task.py").read_bytes()).hexdigest()}
        [entry] = doc["benchmarks"][0]["entries"]
        assert entry["provenance"]["recorded"] == 1
        # each of the 3 items is right in one of its 2 epochs: every pair of trials differs
        assert entry["flip_rate"] == 1.0 and entry["flip_pairs"] == 3
        assert entry["pass_hat_k"] == 0.0 and entry["pass_at_k"] == 1.0
        digests.append(entry["provenance"]["sha256"])
        # the task file changes before the second run
        Path("plain_task.py").write_text(PLAIN_TASK + "\n# edited\n")
    assert digests[0] != digests[1]
