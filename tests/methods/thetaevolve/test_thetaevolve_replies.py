"""The reply-cap count of a ThetaEvolve study (``methods.thetaevolve.replies``) read from a
committed, real study log: it agrees with the task's own record of the same replies and with
Inspect's reading of the log, and a reply marked as cut by the cap raises it by one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log

from harness.results import read_score_metadata
from methods.thetaevolve.replies import reply_caps, write

ROOT = Path(__file__).resolve().parents[3]
LOGS = ROOT / "methods/studies/thetaevolve_open_problems_1p5b/logs/main"


def _circle_log() -> Path:
    """The thetaevolve arm's circle-packing log of the 1.5B study (it has replies that
    stopped on their own and one that ran into the 768-token cap)."""
    for path in sorted(LOGS.glob("*circle-packing*.eval")):
        log = read_eval_log(str(path), header_only=True)
        if (log.eval.metadata or {}).get("factors", {}).get("agent") == "thetaevolve":
            return path
    raise AssertionError(f"no thetaevolve circle-packing log in {LOGS}")


def _model_events(log: EvalLog) -> list[ModelEvent]:
    """The first sample's model calls, as Inspect's own log reader parses them."""
    assert log.samples
    return [e for e in log.samples[0].events if isinstance(e, ModelEvent)]


def _inspect_counts(path: Path) -> tuple[int, int, int]:
    """(replies, replies cut, cap) as Inspect's own log reader sees the model events."""
    models = _model_events(read_eval_log(str(path)))
    cut = sum(e.output.choices[0].stop_reason == "max_tokens" for e in models)
    return len(models), cut, max(int(e.config.max_tokens or 0) for e in models)


def test_counts_agree_with_the_task_record_and_inspect(tmp_path: Path) -> None:
    path = _circle_log()
    shutil.copy(path, tmp_path / path.name)
    row = reply_caps(tmp_path).row(0, named=True)
    replies, cut, cap = _inspect_counts(path)
    assert (row["replies"], row["hit_cap"], row["cap"]) == (replies, cut, cap)
    # the task's score metadata counts the same replies and output tokens independently
    search = json.loads(read_score_metadata(tmp_path, "verified_objective")["metadata"][0])[
        "search"]
    assert row["replies"] == search["responses"]
    assert row["output_tokens"] == search["output_tokens"]
    assert row["agent"] == "thetaevolve" and row["longest"] <= row["cap"]


def test_a_reply_cut_by_the_cap_is_counted(tmp_path: Path) -> None:
    path = _circle_log()
    log = read_eval_log(str(path))
    events = _model_events(log)
    stopped = next(e for e in events if e.output.choices[0].stop_reason == "stop")
    before = reply_caps(LOGS).filter((pl.col("agent") == "thetaevolve")
                                     & (pl.col("sample_id") == "circle_packing"))["hit_cap"][0]
    stopped.output.choices[0].stop_reason = "max_tokens"
    write_eval_log(log, str(tmp_path / path.name))
    after = write(tmp_path, tmp_path / "out")
    assert after["total"]["hit_cap"] == before + 1
    text = (tmp_path / "out" / "replies.md").read_text()
    assert f"**{before + 1} of {after['total']['replies']} replies hit the cap**" in text
