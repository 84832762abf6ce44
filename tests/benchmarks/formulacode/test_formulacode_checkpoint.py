"""FormulaCode's -T checkpoint: an episode killed mid-sample resumes to the same workspace.

The episode (pack task ``primes``, the default ``react()`` agent driven by
``scripted/sequence``: apply the expert's patch, add NOTES.md, ``git rm`` a tracked test
file, append to NOTES.md, list the workspace, submit) runs three times in subprocesses:
uninterrupted without checkpoints (the reference); with a checkpoint at every turn,
SIGKILLed as the fourth checkpoint is about to be taken (three committed: after the
deletion, before the append); and resumed from that log with ``eval_retry`` in a fresh
container, where ``prepare_repo`` has put the repository back at its base commit. The
resumed sample must end with the reference's workspace: the same listing (one appended
line, not two; the deleted file still gone), the same patch as the grader sees it, and the
same gate outcome. A resume without the restore lists the bare repository with only the
appended line. Logs are read through ``harness.results`` only, which must count the sample
once. Timing values are not compared: this run times on the CPU clock (``process_cpu``)
to stay short, so speedups differ by noise between any two runs.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from inspect_ai.util._restic.resolver import _current_platform, cache_path

from benchmarks.formulacode.checkpoint import (
    SAMPLE_CHECKPOINT,
    WORKSPACE_KEY,
    pack_delta,
    unpack_delta,
)
from benchmarks.formulacode.formulacode import record_to_sample
from environments.formulacode.records import load_records
from harness.results import iter_samples, load_results, read_headers
from harness.sandbox.docker import docker_status

ROOT = Path(__file__).resolve().parents[3]
DRIVER = Path(__file__).with_name("formulacode_checkpoint_driver.py")


def test_samples_opt_out_of_the_sandbox_snapshot() -> None:
    sample = record_to_sample(load_records("pack")[0])
    assert sample.checkpoint is SAMPLE_CHECKPOINT
    assert SAMPLE_CHECKPOINT.sandbox_paths == {"default": []}


def test_delta_round_trips_and_refuses_corruption() -> None:
    tree, index = b"diff --git a/x b/x\n\xff\xfe binary-ish bytes\n", b""
    entry = pack_delta(tree, index, 1)
    assert json.loads(json.dumps(entry)) == entry  # the store holds plain JSON
    assert unpack_delta(entry) == (tree, index) and entry["bytes"] == len(tree)
    # the digest covers both patches: moving bytes from one to the other is caught
    swapped = {**entry, "tree": entry["index"], "index": entry["tree"]}
    for tampered in ({**entry, "sha256": "0" * 64}, swapped):
        with pytest.raises(RuntimeError, match="corrupt"):
            unpack_delta(tampered)
    assert WORKSPACE_KEY.startswith("formulacode:")


def _ready() -> None:
    """Skip, saying why, when the machine cannot run the episode (never pass vacuously)."""
    if not cache_path(_current_platform()).exists():
        pytest.skip("Inspect's checkpoints need restic, which it downloads on first use; "
                    "offline, `bash .ci/system.sh restic` provides it")
    status = docker_status()
    if not (status["daemon_running"] and status["compose_ok"] and status["base_image"]):
        pytest.skip(f"docker not ready: {status}")


def _drive(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "INSPECT_DISPLAY": "none",
           "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, str(DRIVER), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def _remove_killed_sandbox(container_file: Path) -> None:
    """The SIGKILLed eval could not tear its compose project down: remove its containers
    and network (only that project's, found from the container the driver named)."""
    name = container_file.read_text().strip() if container_file.exists() else ""
    if not name:
        return
    label = '{{index .Config.Labels "com.docker.compose.project"}}'
    project = subprocess.run(["docker", "inspect", "-f", label, name], capture_output=True,
                             text=True, check=False).stdout.strip()
    if not project:
        return
    selector = f"label=com.docker.compose.project={project}"
    for kind in ("container", "network"):
        listed = subprocess.run(["docker", kind, "ls", "-aq" if kind == "container" else "-q",
                                 "--filter", selector], capture_output=True, text=True,
                                check=False).stdout.split()
        if listed:
            subprocess.run(["docker", kind, "rm", *(["-f"] if kind == "container" else []),
                            *listed], capture_output=True, check=False)


def _sample(log_dir: Path) -> dict[str, Any]:
    headers = read_headers(log_dir).filter(pl.col("status") == "success")
    assert headers.height == 1, headers
    samples = list(iter_samples(headers["log_file"][0]))
    assert len(samples) == 1
    return samples[0]


def _listing(sample: dict[str, Any]) -> str:
    """The workspace listing the episode's last bash call printed."""
    tools = [m for m in sample["messages"] if m["role"] == "tool" and m["function"] == "bash"]
    assert len(tools) == 5 and all(m.get("error") is None for m in tools), tools
    return str(tools[-1]["content"])


def _graded(sample: dict[str, Any]) -> dict[str, Any]:
    """The deterministic part of the score: the patch the grader took from the workspace
    and what it concluded from it (timings left out, see the module docstring)."""
    score = sample["scores"]["formulacode_scorer"]
    value = score["value"]
    meta = score["metadata"]
    tests = {k: meta["tests"][k] for k in ("exit_code", "total", "passed", "failed", "error")}
    return {"patch": score["answer"], "success": value["success"], "triage": value["triage"],
            "infra_failure": value["infra_failure"], "gated": meta["gated"],
            "failure": meta.get("failure"), "tests": tests}


@pytest.mark.docker
@pytest.mark.slow
def test_killed_episode_resumes_to_the_uninterrupted_workspace(tmp_path: Path) -> None:
    _ready()
    ref_dir, dir_ = tmp_path / "reference", tmp_path / "killed"
    container = tmp_path / "killed_container.txt"
    ref = _drive("run", str(ref_dir), "off", "0", str(tmp_path / "unused.txt"))
    assert ref.returncode == 0, ref.stderr[-3000:]

    killed = _drive("run", str(dir_), "turns", "4", str(container))
    try:
        assert killed.returncode == -signal.SIGKILL, (killed.returncode, killed.stderr[-3000:])
    finally:
        _remove_killed_sandbox(container)
    ckpts = sorted(p.name for p in dir_.glob("*.checkpoints/*/ckpt-*.json"))
    assert ckpts == ["ckpt-00001.json", "ckpt-00002.json", "ckpt-00003.json"]
    assert read_headers(dir_)["status"].to_list() == ["started"]  # died mid-sample
    assert load_results(dir_).frame.height == 0

    resumed = _drive("retry", str(dir_))
    assert resumed.returncode == 0, resumed.stderr[-3000:]

    # it resumed (not re-ran): the workspace came back from checkpoint 3's delta
    sample = _sample(dir_)
    resumes = [e["data"] for e in sample["events"]
               if e.get("event") == "info" and e.get("source") == "checkpoint"
               and (e.get("data") or {}).get("event") == "resume"]
    assert len(resumes) == 1, resumes
    report = resumes[0]["report"]["data"]
    assert resumes[0]["attempt"] == "resume"
    assert report["files"] == 3  # sieve/core.py edited, NOTES.md added, the test deleted
    assert report["reset_prepared_tree"] is False  # setup gave a clean base tree

    # and ended with the uninterrupted episode's workspace and grade
    reference = _sample(ref_dir)
    listing = _listing(sample)
    assert listing == _listing(reference)
    assert "D  tests/test_core.py" in listing and " M sieve/core.py" in listing
    assert listing.count("turn 4: checked the counts") == 1
    assert "turn 2: chose a bit sieve" in listing
    assert _graded(sample) == _graded(reference)
    assert _graded(sample)["success"] == 1.0 and "tests/test_core.py" in _graded(sample)["patch"]

    # counted once: the killed attempt gives nothing, the resumed one every score
    results = load_results(dir_)
    speedup = results.frame.filter(pl.col("score_key") == "formulacode_scorer/speedup")
    assert speedup.select("sample_id", "epoch").rows() == [(sample["id"], 1)]
    assert results.frame.select("log_file").unique().height == 1
    assert [(a.why, a.samples) for a in results.account.set_aside] == [("superseded", 0)]
