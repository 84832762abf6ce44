"""Speed of ``leaderboards.build`` from logs to every output (tables, JSON, EEE, site).

The issue's size is 100 logs / 100k samples: 10 models x 10 setups (a task arg), 1,000
shared items per log, ~5% errored samples. CI runs a smaller size by default
(``LEADERBOARD_PERF_N`` samples per log, default 100); the full size is run by hand::

    LEADERBOARD_PERF_N=1000 .venv/bin/pytest tests/perf/test_leaderboard_perf.py \\
        --benchmark-enable -s

Logs are ``.eval`` zips holding the two members ``harness.results`` reads
(``header.json`` and ``summaries.json``), deflate-compressed, cached under the temp dir.
No assertion is made on the time; it is printed and kept in the benchmark's report.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
import zipfile
from pathlib import Path

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from leaderboards.build import build
from leaderboards.tables import Options

pytestmark = pytest.mark.perf

N_LOGS = 100
N_PER_LOG = int(os.environ.get("LEADERBOARD_PERF_N", "100"))
FORMAT = 1


def _write(path: Path, model: str, style: str, n: int, rng: random.Random) -> None:
    skill = rng.uniform(0.2, 0.9)
    header = {"version": 2, "status": "success", "eval": {
        "eval_id": path.stem, "run_id": "perf", "created": "2026-01-01T00:00:00+00:00",
        "task": "perf/bench", "task_version": 0, "model": model, "model_args": {},
        "task_args": {"prompt_style": style, "n": n}, "scorers": [{"name": "acc"}]},
        "plan": {"steps": [{"solver": "generate"}], "config": {}}}
    summaries = []
    for i in range(n):
        errored = rng.random() < 0.05
        summaries.append({
            "id": f"item-{i:05d}", "epoch": 1,
            "scores": {} if errored else {"acc": {"value": "C" if rng.random() < skill
                                                  else "I"}},
            "model_usage": {model: {"input_tokens": rng.randint(50, 2000),
                                    "output_tokens": rng.randint(5, 400),
                                    "total_tokens": 0}},
            "total_time": rng.uniform(0.1, 20.0), "working_time": 1.0,
            "error": "RuntimeError: boom" if errored else None,
        })
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("header.json", json.dumps(header))
        zf.writestr("summaries.json", json.dumps(summaries))


def perf_logs(n_per_log: int = N_PER_LOG) -> Path:
    """100 logs of ``n_per_log`` samples (written once per size and format)."""
    folder = Path(tempfile.gettempdir()) / f"evalsuite-lb-perf-v{FORMAT}-{N_LOGS}-{n_per_log}"
    if not (folder / ".complete").exists():
        folder.mkdir(parents=True, exist_ok=True)
        rng = random.Random(0)
        for k in range(N_LOGS):
            _write(folder / f"log_{k:03d}.eval", f"perf/model-{k // 10}",
                   f"style-{k % 10}", n_per_log, rng)
        (folder / ".complete").write_text("ok\n")
    return folder


@pytest.mark.slow
def test_build_100_logs(benchmark: BenchmarkFixture, tmp_path: Path) -> None:
    logs = perf_logs()
    paths = benchmark.pedantic(build, args=(logs, tmp_path / "out", Options(n_boot=1000)),
                               rounds=1, iterations=1)
    doc = json.loads(paths["json"].read_text())
    (bench,) = doc["benchmarks"]
    assert len(bench["entries"]) == 100 and bench["n_items"] == N_PER_LOG
    assert sum(e["n"] for e in bench["entries"]) == N_LOGS * N_PER_LOG
    assert len(bench["pairwise"]) == 100 * 99
    if benchmark.stats is not None:
        print(f"\nbuild: {N_LOGS} logs x {N_PER_LOG} samples in "
              f"{benchmark.stats.stats.mean:.2f} s")
