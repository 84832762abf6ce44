"""CausalGame's -T checkpoint: an episode killed mid-sample resumes to the same end.

The episode (3 deploys, then submit; one model call per turn) runs three times in
subprocesses: uninterrupted without checkpoints (the reference); with a checkpoint at every
turn, SIGKILLed as the third checkpoint is about to be taken (two committed, after the
second deploy); and resumed from that log with ``eval_retry``. The resumed sample must be
the reference's: same score, same drones and deploys, and the same tool results word for
word, including the third deploy's, which the rebuilt game draws after the resume (a game
rebuilt without its action log draws other flights and counts 10 drones, not 30). Logs are
read through ``harness.results`` only, which must count the sample once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from inspect_ai.util import TimeInterval, TurnInterval
from inspect_ai.util._restic.resolver import _current_platform, cache_path

from benchmarks.causalgame.causalgame import causalgame, checkpoint_config
from benchmarks.causalgame.session import resume_game
from harness.results import iter_samples, load_results, read_headers, read_score_metadata

ROOT = Path(__file__).resolve().parents[3]
DRIVER = Path(__file__).with_name("causalgame_checkpoint_driver.py")
SAMPLE = "antenna_trap"

needs_restic = pytest.mark.skipif(
    not cache_path(_current_platform()).exists(),
    reason="Inspect's checkpoints need restic, which it downloads on first use; offline, "
    "`bash .ci/system.sh restic` provides it",
)


@pytest.mark.parametrize(("option", "trigger"), [
    (None, None), (False, None), ("off", None), (0, None),
    (True, TurnInterval(every=1)), ("turns", TurnInterval(every=1)),
    (3, TurnInterval(every=3)), ("turns:2", TurnInterval(every=2)),
    ("90s", TimeInterval(every=timedelta(seconds=90))),
    ("5m", TimeInterval(every=timedelta(minutes=5))),
])
def test_checkpoint_option(option: Any, trigger: Any) -> None:
    config = checkpoint_config(option)
    assert (None if config is None else config.trigger) == trigger
    task = causalgame(scenarios="antenna_trap", sandbox="none", checkpoint=option)
    assert task.on_resume is resume_game  # wired whatever the option: --checkpoint works too
    with pytest.raises(ValueError, match="checkpoint must be"):
        checkpoint_config("hourly")


def _drive(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "INSPECT_DISPLAY": "none",
           "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, str(DRIVER), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def _success_log(log_dir: Path) -> Path:
    headers = read_headers(log_dir).filter(pl.col("status") == "success")
    assert headers.height == 1, headers
    return Path(headers["log_file"][0])


def _sample(log_file: Path) -> dict[str, Any]:
    return next(s for s in iter_samples(log_file) if s["id"] == SAMPLE)


def _tool_texts(sample: dict[str, Any]) -> list[str]:
    return [json.dumps(m["content"]) for m in sample["messages"] if m["role"] == "tool"]


def _metadata(log_dir: Path) -> dict[str, Any]:
    frame = read_score_metadata(log_dir, "causalgame_scorer")
    assert frame.height == 1, frame
    meta: dict[str, Any] = json.loads(frame["metadata"][0])
    return {k: meta[k] for k in ("drones_used", "deploys", "submitted", "seed")}


@pytest.mark.slow
@needs_restic
def test_killed_episode_resumes_to_the_uninterrupted_result(tmp_path: Path) -> None:
    ref_dir, dir_ = tmp_path / "reference", tmp_path / "killed"
    ref = _drive("run", str(ref_dir), "off", "0")
    assert ref.returncode == 0, ref.stderr[-3000:]

    killed = _drive("run", str(dir_), "turns", "3")
    assert killed.returncode == -signal.SIGKILL, (killed.returncode, killed.stderr[-3000:])
    ckpts = sorted(p.name for p in dir_.glob("*.checkpoints/*/ckpt-*.json"))
    assert ckpts == ["ckpt-00001.json", "ckpt-00002.json"]
    assert read_headers(dir_)["status"].to_list() == ["started"]  # died mid-sample
    assert load_results(dir_).frame.height == 0  # nothing finished before the kill

    resumed = _drive("retry", str(dir_))
    assert resumed.returncode == 0, resumed.stderr[-3000:]

    # it resumed (not re-ran): the game was rebuilt from the two deploys of checkpoint 2
    sample = _sample(_success_log(dir_))
    resumes = [e["data"] for e in sample["events"]
               if e.get("event") == "info" and e.get("source") == "checkpoint"
               and (e.get("data") or {}).get("event") == "resume"]
    assert len(resumes) == 1, resumes
    assert resumes[0]["attempt"] == "resume"
    assert resumes[0]["report"]["data"]["replayed_actions"] == 2

    # and ended where the uninterrupted episode ended
    reference = _sample(_success_log(ref_dir))
    assert _tool_texts(sample) == _tool_texts(reference)
    assert len(_tool_texts(sample)) == 4  # 3 deploys + the submission
    assert _metadata(dir_) == _metadata(ref_dir)
    assert _metadata(dir_)["drones_used"] == 30

    # counted once: the killed attempt gives nothing, the resumed one every score
    results = load_results(dir_)
    survival = results.frame.filter(pl.col("score_key") == "causalgame_scorer/survival")
    ref_survival = load_results(ref_dir).frame.filter(
        pl.col("score_key") == "causalgame_scorer/survival")
    assert survival.select("sample_id", "epoch").rows() == [(SAMPLE, 1)]
    assert survival["score_value"].to_list() == ref_survival["score_value"].to_list()
    assert results.frame.select("log_file").unique().height == 1
    # the killed attempt is the only thing set aside (its checkpoint folders are no logs)
    assert [(a.why, a.samples) for a in results.account.set_aside] == [("superseded", 0)]
