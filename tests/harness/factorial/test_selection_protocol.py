"""Study cells as selected tasks of one eval set: one flat log dir, runner-owned bookkeeping,
and a Ray-executed study killed with SIGKILL and resumed equals an uninterrupted run."""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import polars as pl
import pytest

from harness.factorial.analysis import analyze
from harness.factorial.report.frame import study_frame
from harness.factorial.run import cell_status, run_study
from harness.factorial.selection import EVAL_SET_ID_FILE, cell_logs
from harness.factorial.study import load_study
from harness.results import load_results

pytestmark = pytest.mark.serial  # starts Ray and kills processes on a timer (CI runs it alone)

N = 12  # items per cell, one at a time (max_samples=1), each flushed to the log
SLOW_POLICIES = textwrap.dedent("""\
    import asyncio

    from harness.plugins.policy import get_policy, scripted_policy


    def _slowed(base):
        async def policy(input, tools, config, args):
            await asyncio.sleep(0.05)  # so a kill can land between two samples of a cell
            return get_policy(base)(input, tools, config, args)
        return scripted_policy("slow-" + base)(policy)


    for _base in ("arith-oracle", "arith-left-to-right"):
        _slowed(_base)
    """)


def _study(tmp_path: Path, slow: bool = False) -> Path:
    path = tmp_path / "study.yaml"
    prefix = "slow-" if slow else ""
    policies = ("  - {name: policies, binds_to: model_args, key: policy_module,"
                " levels: [slowpolicies]}\n") if slow else ""
    (tmp_path / "slowpolicies.py").write_text(SLOW_POLICIES)
    path.write_text(textwrap.dedent(f"""\
        name: selectable
        response:
          tasks:
            - name: harness/arithmetic
              args: {{n: {N}, seed: 7, agent: react}}
          scores: [exact_integer]
        factors:
          - name: model
            binds_to: model
            levels:
              - {{label: oracle, value: scripted/{prefix}arith-oracle}}
              - {{label: ltr, value: scripted/{prefix}arith-left-to-right}}
          - name: intervention
            binds_to: intervention
            levels: [none, distractor]
        """) + policies)
    return path


def _eval_set_ids(log_dir: Path) -> set[str]:
    """The eval-set id each log's header carries (read from the .eval zip's header)."""
    ids = set()
    for path in log_dir.glob("*.eval"):
        with zipfile.ZipFile(path) as archive:
            ids.add(json.loads(archive.read("header.json"))["eval"].get("eval_set_id"))
    return ids


def _scores(log_dir: Path) -> pl.DataFrame:
    """Cell x sample x epoch x score, sorted: what the analysis reads."""
    frame = study_frame(log_dir).filter(pl.col("score_key") == "exact_integer")
    return frame.select("cell_id", "model", "intervention", "sample_id", "epoch",
                        "score_value").sort("cell_id", "sample_id", "epoch")


def _rounded(value: object) -> object:
    """Floats to 9 decimals (a sum of squares that is 0 prints as ~1e-14), NaN to None."""
    if isinstance(value, float):
        return None if math.isnan(value) else round(value, 9)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def _analysed(frame: pl.DataFrame) -> object:
    """The analysis tables a report prints: ANOVA, marginal means, pairwise, effects."""
    result = analyze(frame, "score_value", ["model", "intervention"], item="sample_id",
                     family="binomial", item_mode="cluster")
    tables = result.to_dict()
    return _rounded({k: tables[k] for k in ("anova", "marginal_means", "pairwise",
                                            "effects")})


def _interrupted_samples(log_dir: Path) -> pl.DataFrame:
    """Samples on disk in the logs of cells that have no successful log yet."""
    status = cell_status(log_dir)
    files = [log_dir / Path(str(row["log_file"])).name
             for cell_id, rows in cell_logs(log_dir).items() if status[cell_id] != "success"
             for row in rows]
    if not files:
        return pl.DataFrame(schema={"cell": pl.String, "sample_id": pl.String,
                                    "total_time": pl.Float64})
    frame = load_results(files, skip_bad_logs=True).frame  # one may be mid-write
    return (frame.filter(pl.col("score_key") == "exact_integer")
            .select(pl.col("eval_metadata").str.json_path_match("$.cell_id").alias("cell"),
                    pl.col("sample_id").cast(pl.String), "total_time"))


def _session_pids(sid: int) -> list[int]:
    """Processes still alive in the session our killed child led (Ray's, if any)."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid:  # field 6 of stat: the session id
            pids.append(int(stat.parent.name))
    return pids


@pytest.mark.slow
def test_local_cells_share_one_eval_set(tmp_path: Path) -> None:
    study_path = _study(tmp_path)
    log_dir = tmp_path / "logs"
    summary = run_study(study_path, log_dir=log_dir, max_tasks=2)
    assert summary.success
    cells = load_study(study_path).cells()
    set_id = (log_dir / EVAL_SET_ID_FILE).read_text().strip()
    assert _eval_set_ids(log_dir) == {set_id}  # every cell a task of the one eval set
    listed = json.loads((log_dir / "eval-set.json").read_text())
    assert listed["eval_set_id"] == set_id and len(listed["tasks"]) == len(cells)
    assert len(list(log_dir.glob("*.eval"))) == len(cells)  # flat: no per-cell folders
    again = run_study(study_path, log_dir=log_dir)
    assert again.ran == [] and again.new_logs == []
    assert (log_dir / EVAL_SET_ID_FILE).read_text().strip() == set_id


@pytest.mark.slow
def test_ray_study_killed_and_resumed_equals_uninterrupted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ray", reason="ray is not installed (pip install 'ray>=2.30')")
    study_path = _study(tmp_path, slow=True)
    # the policy module is importable here, in the killed driver and in Ray's workers
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        p for p in (str(tmp_path), os.environ.get("PYTHONPATH")) if p))
    cells = load_study(study_path).cells()

    reference = tmp_path / "reference"  # uninterrupted, local executor
    assert run_study(study_path, log_dir=reference, max_tasks=4).success

    log_dir = tmp_path / "logs"
    script = (
        "import ray\n"
        "ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)\n"
        "from harness.factorial.run import run_study\n"
        f"run_study({str(study_path)!r}, log_dir={str(log_dir)!r}, executor='ray',"
        " max_samples=1, log_buffer=1)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 45
        # kill once a cell is complete and another has finished samples on disk
        while not (any(s == "success" for s in cell_status(log_dir).values())
                   and _interrupted_samples(log_dir).height >= 3):
            assert proc.poll() is None, "the study ended before it could be killed"
            assert time.monotonic() < deadline, "no cell finished in 45 s"
            time.sleep(0.05)
    finally:
        # SIGKILL the driver and, at once, every process of its session by id: Ray's
        # raylet and workers sit in process groups of their own, and a worker left to
        # notice its driver's death would finish its cell meanwhile
        os.killpg(proc.pid, signal.SIGKILL)
        for _ in range(50):
            alive = _session_pids(proc.pid)
            if not alive:
                break
            for pid in alive:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.1)
        proc.wait()

    before = cell_status(log_dir)
    done_before = {cid for cid, status in before.items() if status == "success"}
    assert 0 < len(done_before) < len(cells), f"kill landed outside the run: {before}"
    finished_before = _interrupted_samples(log_dir)  # samples the killed run completed
    assert finished_before.height > 0, f"no finished sample of an unfinished cell: {before}"

    summary = run_study(study_path, log_dir=log_dir, executor="ray")
    assert summary.success
    assert set(summary.skipped) == done_before
    assert set(summary.ran) == {c.id for c in cells} - done_before

    # one log per cell, in one eval set; the interrupted attempts were superseded
    logs = cell_logs(log_dir)
    assert sorted(len(rows) for rows in logs.values()) == [1] * len(cells)
    assert len(_eval_set_ids(log_dir)) == 1
    loaded = load_results(log_dir)
    assert loaded.account.set_aside == [], loaded.account.as_dict()  # nothing doubled
    assert len(loaded.account.counted) == len(cells)
    per_cell = (loaded.frame.filter(pl.col("score_key") == "exact_integer")
                .with_columns(pl.col("eval_metadata").str.json_path_match("$.cell_id")
                              .alias("cell"))
                .group_by("cell").agg(pl.len().alias("rows"),
                                      pl.col("sample_id").n_unique().alias("samples")))
    assert per_cell["rows"].to_list() == [N] * len(cells)
    assert per_cell["samples"].to_list() == [N] * len(cells)

    # the resumed study is the uninterrupted one, row for row and in its analysis
    resumed, uninterrupted = _scores(log_dir), _scores(reference)
    assert resumed.equals(uninterrupted)
    assert _analysed(resumed) == _analysed(uninterrupted)
    # the samples the killed run finished were reused, not run again: a rerun sample
    # could not repeat its predecessor's wall time to the nanosecond
    final = loaded.frame.filter(pl.col("score_key") == "exact_integer").select(
        pl.col("eval_metadata").str.json_path_match("$.cell_id").alias("cell"),
        pl.col("sample_id").cast(pl.String), pl.col("total_time").alias("final_time"))
    kept = finished_before.join(final, on=["cell", "sample_id"], how="left")
    assert kept["total_time"].to_list() == kept["final_time"].to_list()
    print(f"kill: {len(done_before)} cells done, {finished_before.height} samples of an "
          f"interrupted cell on disk, reused")


FLAKY_POLICIES = textwrap.dedent("""\
    import hashlib
    from pathlib import Path

    from harness.plugins.policy import get_policy, scripted_policy

    SEEN = Path(__file__).parent / "seen"


    @scripted_policy("flaky-arith-oracle")
    def flaky(input, tools, config, args):
        # the first call on every third item fails; any later call on it succeeds
        text = str(input[-1].text if isinstance(input, list) else input)
        key = hashlib.sha256(text.encode()).hexdigest()[:16]
        SEEN.mkdir(exist_ok=True)
        if int(key, 16) % 3 == 0 and not (SEEN / key).exists():
            (SEEN / key).write_text("failed once")
            raise RuntimeError("flaky backend: first call on this item fails")
        return get_policy("arith-oracle")(input, tools, config, args)
    """)


@pytest.mark.slow
def test_a_cell_with_errored_samples_is_resumed_and_counted_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers never fail a task on sample errors, so the runner retries: the cell's
    errored samples are rerun from its log, the good ones reused, one log left."""
    (tmp_path / "flakypolicies.py").write_text(FLAKY_POLICIES)
    monkeypatch.syspath_prepend(str(tmp_path))
    study_path = tmp_path / "study.yaml"
    study_path.write_text(textwrap.dedent(f"""\
        name: flaky
        response:
          tasks:
            - name: harness/arithmetic
              args: {{n: {N}, seed: 7, agent: generate}}
          scores: [exact_integer]
        factors:
          - name: model
            binds_to: model
            levels:
              - {{label: flaky, value: scripted/flaky-arith-oracle}}
          - name: policies
            binds_to: model_args
            key: policy_module
            levels: [flakypolicies]
        """))
    log_dir = tmp_path / "logs"
    run_study(study_path, log_dir=log_dir, retry_attempts=0)
    failed_once = len(list((tmp_path / "seen").iterdir()))
    assert failed_once > 0  # the design must produce errors, or the test shows nothing
    first = load_results(log_dir)
    assert first.frame.filter(pl.col("error").is_not_null())["sample_id"].n_unique() \
        == failed_once  # with no retry the errors stay, counted
    for marker in (tmp_path / "seen").iterdir():  # the same items fail once again
        marker.unlink()
    run_study(study_path, log_dir=tmp_path / "retried", retry_attempts=1)
    logs = list((tmp_path / "retried").glob("*.eval"))
    assert len(logs) == 1  # the errored attempt was superseded by its resumed log
    frame = load_results(tmp_path / "retried").frame.filter(
        pl.col("score_key") == "exact_integer")
    assert frame.height == N and frame["sample_id"].n_unique() == N
    assert frame["score_value"].to_list() == [1.0] * N
