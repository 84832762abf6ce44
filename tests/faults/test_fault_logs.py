"""Fault injection on the log reader and the board: copies, retries, broken and foreign logs.

Every consumer reads logs through ``harness.results.load_results``; these tests break logs
the ways users break them (a copy under a second name, an interrupted attempt beside its
retry, a truncated or zero-byte file, an invalid field, a newer format) and check that each
sample is counted once, that the output says what it set aside, and that a bad file is one
line naming it. Real Inspect logs throughout (mockllm, offline).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from fault_support import offline_task
from inspect_ai import Task, eval, eval_set
from inspect_ai.solver import Generate, TaskState, solver

from harness.results import (
    DuplicateLogError,
    LogReadError,
    load_results,
    read_headers,
    read_results,
)
from leaderboards.build import build

N = 6



def _task(name: str = "faulty", fail_marker: Path | None = None) -> Task:
    """Six samples; with ``fail_marker``, sample 4 raises until the marker file exists."""

    @solver
    def flaky() -> Any:
        async def solve(state: TaskState, generate_: Generate) -> TaskState:
            if fail_marker is not None and state.sample_id == 4 and not fail_marker.exists():
                fail_marker.write_text("failed once")
                raise RuntimeError("transient failure")
            return state

        return solve

    return offline_task(name, N, before=[flaky()])


def _eval(log_dir: Path, **kwargs: Any) -> Path:
    log = eval(_task(**kwargs), model="mockllm/model", log_dir=str(log_dir), display="none",
               max_samples=1)[0]
    return Path(log.location)


@pytest.fixture(scope="module")
def one_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _eval(tmp_path_factory.mktemp("one"))


def _n_samples(frame: pl.DataFrame) -> int:
    return frame.select("log_file", "sample_id", "epoch").unique().height


# --------------------------------------------------------------------------- copies


def test_a_copied_log_counts_once_and_is_named(one_log: Path, tmp_path: Path) -> None:
    shutil.copy(one_log, tmp_path / "original.eval")
    shutil.copy(one_log, tmp_path / "copy-of-original.eval")
    results = load_results(tmp_path)
    assert _n_samples(results.frame) == N  # was 2 N: the copy doubled n
    duplicates = results.account.of("duplicate")
    assert len(duplicates) == 1 and duplicates[0].samples == N
    assert "1 duplicate copy" in results.account.line()
    assert read_results(tmp_path).height == results.frame.height


def test_differing_copies_are_an_error_naming_both(one_log: Path, tmp_path: Path) -> None:
    shutil.copy(one_log, tmp_path / "a.eval")
    tampered = tmp_path / "b.eval"
    with zipfile.ZipFile(one_log) as zin, zipfile.ZipFile(tampered, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename == "summaries.json":
                summaries = json.loads(data)
                score = summaries[0]["scores"]["match"]
                score["value"] = "I" if score["value"] == "C" else "C"
                data = json.dumps(summaries).encode()
            zout.writestr(info.filename, data)
    with pytest.raises(DuplicateLogError) as caught:
        load_results(tmp_path)
    assert "a.eval" in str(caught.value) and "b.eval" in str(caught.value)


def test_a_board_over_a_copied_log_equals_the_board_without_it(one_log: Path,
                                                               tmp_path: Path) -> None:
    clean, doubled = tmp_path / "clean", tmp_path / "doubled"
    for folder in (clean, doubled):
        folder.mkdir()
        shutil.copy(one_log, folder / "run.eval")
    shutil.copy(one_log, doubled / "run-copy.eval")
    boards = {}
    for folder in (clean, doubled):
        paths = build(folder, tmp_path / f"board-{folder.name}")
        boards[folder.name] = json.loads(paths["json"].read_text())
    entries = {name: [{k: v for k, v in e.items() if k != "logs"}
                      for b in doc["benchmarks"] for e in b["entries"]]
               for name, doc in boards.items()}
    assert entries["doubled"] == entries["clean"]
    assert entries["clean"][0]["n"] == N
    counting = boards["doubled"]["counting"]
    assert counting["duplicates_set_aside"] == 1
    assert [a["why"] for a in counting["set_aside"]] == ["duplicate"]
    assert "set aside 1 duplicate copy" in (tmp_path / "board-doubled" /
                                            "leaderboard.md").read_text()


# --------------------------------------------------------------------------- retries


def test_a_retried_eval_supersedes_its_failed_attempt(tmp_path: Path) -> None:
    """An eval set resumed after a failure, its failed log kept (``retry_cleanup=False``,
    as after a kill): the retry's log counts, the failed attempt is set aside."""
    marker = tmp_path / "marker"
    log_dir = tmp_path / "logs"
    options: dict[str, Any] = {"log_dir": str(log_dir), "model": "mockllm/model",
                               "display": "none", "max_samples": 1, "retry_attempts": 0,
                               "retry_cleanup": False}
    done, _ = eval_set(_task(fail_marker=marker), **options)
    assert not done
    done, _ = eval_set(_task(fail_marker=marker), **options)
    assert done
    headers = read_headers(log_dir).sort("created")
    assert headers["status"].to_list() == ["error", "success"]
    first, retried = headers["log_file"].to_list()
    results = load_results(log_dir)
    assert _n_samples(results.frame) == N  # the old reader counted the failed log's too
    assert set(results.frame["log_file"]) == {retried}
    superseded = results.account.of("superseded")
    assert [s.log_file for s in superseded] == [first]
    assert read_results(log_dir).select("sample_id").n_unique() == N


def test_unfinished_attempts_count_each_sample_from_the_newest(one_log: Path,
                                                               tmp_path: Path) -> None:
    """Two interrupted attempts of one task: the union, each sample from the newer one."""
    with zipfile.ZipFile(one_log) as zf:
        header = json.loads(zf.read("header.json"))
        summaries = json.loads(zf.read("summaries.json"))

    def attempt(name: str, created: str, eval_id: str, ids: set[int], value: str) -> None:
        start = {k: header[k] for k in ("version", "eval", "plan") if k in header}
        start["eval"] = {**start["eval"], "created": created, "eval_id": eval_id}
        chosen = [{**s, "scores": {"match": {**s["scores"]["match"], "value": value}}}
                  for s in summaries if s["id"] in ids]
        with zipfile.ZipFile(tmp_path / name, "w") as zf:
            zf.writestr("_journal/start.json", json.dumps(start))
            zf.writestr("_journal/summaries/1.json", json.dumps(chosen))

    attempt("old.eval", "2026-01-01T00:00:00+00:00", "e-old", {1, 2, 3}, "I")
    attempt("new.eval", "2026-01-02T00:00:00+00:00", "e-new", {2, 3, 4}, "C")
    results = load_results(tmp_path)
    frame = results.frame.filter(pl.col("score_key") == "match")
    by_id = dict(zip(frame["sample_id"].to_list(), frame["score_value"].to_list(),
                     strict=True))
    assert by_id == {"1": 0.0, "2": 1.0, "3": 1.0, "4": 1.0}  # 2 and 3 from the newer
    assert [(Path(a.log_file).name, a.why, a.samples) for a in results.account.set_aside] \
        == [("old.eval", "partly superseded", 2)]


# --------------------------------------------------------------------------- broken files


def _broken_logs(one_log: Path, folder: Path) -> dict[str, tuple[Path, str]]:
    """name -> (file, text its error must contain)."""
    data = one_log.read_bytes()
    cases: dict[str, tuple[Path, str]] = {}
    (folder / "empty.eval").write_bytes(b"")
    cases["empty"] = (folder / "empty.eval", "empty file")
    (folder / "truncated.eval").write_bytes(data[: len(data) // 2])
    cases["truncated"] = (folder / "truncated.eval", "truncated or corrupt")

    def rewrite(name: str, change: Any) -> Path:
        target = folder / name
        with zipfile.ZipFile(one_log) as zin, zipfile.ZipFile(target, "w") as zout:
            for info in zin.infolist():
                member = zin.read(info)
                if info.filename in ("header.json", "summaries.json"):
                    member = json.dumps(change(info.filename, json.loads(member))).encode()
                zout.writestr(info.filename, member)
        return target

    cases["epoch"] = (rewrite("bad-epoch.eval", lambda n, d: [
        {**s, "epoch": "one"} for s in d] if n == "summaries.json" else d),
        "samples[0].epoch")
    cases["version"] = (rewrite("future.eval", lambda n, d: {**d, "version": 99}
                                if n == "header.json" else d), "field version")
    cases["eval"] = (rewrite("no-eval.eval", lambda n, d: {k: v for k, v in d.items()
                                                           if k != "eval"}
                             if n == "header.json" else d), "field eval")
    (folder / "not-json.eval").write_bytes(b"PK\x05\x06" + b"\x00" * 18)
    cases["no members"] = (folder / "not-json.eval", "neither header.json")
    return cases


def test_every_broken_log_is_one_line_naming_the_file(one_log: Path, tmp_path: Path) -> None:
    for name, (path, text) in _broken_logs(one_log, tmp_path).items():
        with pytest.raises(LogReadError) as caught:
            load_results(path)
        message = str(caught.value)
        assert "\n" not in message, name
        assert message.startswith(str(path)) and text in message, (name, message)


def test_skip_bad_logs_counts_them_and_keeps_the_rest(one_log: Path, tmp_path: Path) -> None:
    broken = _broken_logs(one_log, tmp_path)
    shutil.copy(one_log, tmp_path / "good.eval")
    with pytest.raises(LogReadError):
        load_results(tmp_path)
    results = load_results(tmp_path, skip_bad_logs=True)
    assert _n_samples(results.frame) == N
    assert len(results.account.of("unreadable")) == len(broken)
    assert f"{len(broken)} unreadable logs" in results.account.line()


def _harness(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness.cli", *args], capture_output=True,
                          text=True, timeout=300, check=False)


@pytest.mark.slow
def test_the_board_cli_refuses_a_bad_log_in_one_line_or_skips_it(one_log: Path,
                                                                 tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(one_log, logs / "good.eval")
    (logs / "zero.eval").write_bytes(b"")
    out = tmp_path / "board"
    refused = _harness("leaderboard", "build", str(logs), "--out", str(out))
    assert refused.returncode == 2
    assert "Traceback" not in refused.stderr
    assert f"error: {logs / 'zero.eval'}: empty file" in refused.stderr
    assert not out.exists() or not (out / "leaderboard.json").exists()
    debug = _harness("leaderboard", "build", str(logs), "--out", str(out), "--debug")
    assert debug.returncode == 2 and "Traceback" in debug.stderr
    skipped = _harness("leaderboard", "build", str(logs), "--out", str(out),
                       "--skip-bad-logs")
    assert skipped.returncode == 0, skipped.stderr
    counting = json.loads((out / "leaderboard.json").read_text())["counting"]
    assert counting["unreadable_skipped"] == 1 and counting["samples_counted"] == N


@pytest.mark.slow
def test_the_report_cli_refuses_a_bad_log_in_one_line_or_counts_it(tmp_path: Path) -> None:
    from harness.factorial.run import run_study

    tiny = Path(__file__).resolve().parents[2] / "harness/factorial/examples/tiny_study.yaml"
    logs = tmp_path / "logs"
    assert run_study(tiny, log_dir=logs).success
    (logs / "half-written.eval").write_bytes(b"PK\x03\x04 cut here")
    out = tmp_path / "report"
    refused = _harness("study", "report", str(logs), "--out", str(out))
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert f"error: {logs / 'half-written.eval'}: not a readable .eval zip" in refused.stderr
    assert not (out / "report.json").exists()
    counted = _harness("study", "report", str(logs), "--out", str(out), "--skip-bad-logs")
    assert counted.returncode == 0, counted.stderr
    counting = json.loads((out / "report.json").read_text())["data"]["counting"]
    assert counting["unreadable_skipped"] == 1
    assert counting["samples_counted"] == 16  # 4 cells x 4 items, nothing lost
    assert "1 unreadable log" in counted.stdout
