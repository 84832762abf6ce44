"""Fault injection on runs: ``kill -9`` a study and a board build at several points, resume,
and check that every sample is counted exactly once, cell for cell, as in a run that was
never interrupted.

The old reader counted a resumed study's interrupted logs too (360 rows for 240 samples);
its resume test looked only at successful logs, so it could not see that.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.factorial.report.assemble import report_data
from harness.factorial.run import cell_status, run_study

pytestmark = pytest.mark.serial  # kills runs at chosen points: CI runs it alone

N = 40


TINY = Path(__file__).resolve().parents[2] / "harness/factorial/examples/tiny_study.yaml"


def _study(tmp_path: Path) -> Path:
    """The tiny example study (2 models x 2 interventions) on N items instead of 4."""
    text = TINY.read_text()
    for old, new in (("name: tiny", "name: resumable"), ("n: 4,", f"n: {N},"),
                     ("limit: 4", f"limit: {N}")):
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / "study.yaml"
    path.write_text(text)
    return path


def _flushed(folder: Path) -> int:
    """Sample summaries flushed to the journals of unfinished logs (0 while none)."""
    count = 0
    for path in folder.rglob("*.eval"):
        try:
            with zipfile.ZipFile(path) as zf:
                names = zf.namelist()
        except (zipfile.BadZipFile, OSError):  # being written
            continue
        if "header.json" not in names:
            count += sum(1 for n in names if n.startswith("_journal/summaries/"))
    return count


def _kill_when(script: str, ready: Callable[[], bool]) -> None:
    """Start ``script`` in its own process group; SIGKILL the group once ``ready()``."""
    proc = subprocess.Popen([sys.executable, "-c", script], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not ready() and proc.poll() is None:
            assert time.monotonic() < deadline, "the kill point never came"
            time.sleep(0.01)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)  # our own child's process group only
        proc.wait()


def _per_cell(data: dict[str, Any]) -> dict[tuple[str, ...], tuple[int, float]]:
    return {tuple(sorted(c["levels"].items())): (c["n"], round(c["mean"], 12))
            for c in data["cell_results"]}


@pytest.mark.slow
def test_a_study_killed_at_several_points_reports_what_an_uninterrupted_run_does(
        tmp_path: Path) -> None:
    study = _study(tmp_path)
    clean = tmp_path / "clean"
    assert run_study(study, log_dir=clean, max_tasks=1, max_samples=1).success
    reference = report_data(clean)

    resumed = tmp_path / "resumed"
    script = ("from harness.factorial.run import run_study\n"
              f"run_study({str(study)!r}, log_dir={str(resumed)!r}, max_tasks=1, "
              "max_samples=1)\n")
    def logs() -> int:
        return len(list(resumed.rglob("*.eval")))

    # three kill points: a cell's log just created (no sample flushed), a cell with
    # samples flushed to its journal, and the next cell's log created
    _kill_when(script, lambda: logs() >= 1)
    before = logs()
    _kill_when(script, lambda: _flushed(resumed) >= 1)
    assert _flushed(resumed) >= 1, "no kill landed after a flush"
    _kill_when(script, lambda: logs() > before + 1)
    statuses = cell_status(resumed)
    assert sum(1 for s in statuses.values() if s != "success") >= 1
    assert run_study(study, log_dir=resumed, max_tasks=1, max_samples=1).success

    logs_left = sorted(p.name for p in resumed.rglob("*.eval"))
    data = report_data(resumed)
    assert data["data"]["n_rows"] == reference["data"]["n_rows"] == 4 * N
    assert _per_cell(data) == _per_cell(reference)
    counting = data["data"]["counting"]
    assert counting["samples_counted"] == 4 * N
    assert len(logs_left) > 4  # the interrupted attempts are still there ...
    assert counting["superseded_set_aside"] + counting["partly_superseded"] >= 1  # ... aside


@pytest.mark.slow
def test_a_board_build_killed_at_several_points_leaves_the_old_board_or_none(
        tmp_path: Path) -> None:
    from fault_support import offline_task
    from inspect_ai import eval

    logs = tmp_path / "logs"
    for name in ("alpha", "beta", "gamma"):
        eval(offline_task(name, 30), model="mockllm/model", log_dir=str(logs),
             display="none")
    reference = tmp_path / "reference"
    script = ("import sys\nfrom leaderboards.build import build\n"
              f"build({str(logs)!r}, sys.argv[1])\n")
    subprocess.run([sys.executable, "-c", script, str(reference)], check=True, timeout=300)
    expected = json.loads((reference / "leaderboard.json").read_text())

    out = tmp_path / "board"
    for delay in (0.5, 1.5, 3.0):
        proc = subprocess.Popen([sys.executable, "-c", script, str(out)],
                                start_new_session=True)
        time.sleep(delay)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        board = out / "leaderboard.json"
        if board.exists():  # whole or absent: never a truncated or empty file
            assert json.loads(board.read_text()) == expected
            assert (out / "leaderboard.csv").stat().st_size > 0
    subprocess.run([sys.executable, "-c", script, str(out)], check=True, timeout=300)
    assert json.loads((out / "leaderboard.json").read_text()) == expected
