"""Peak memory of ``harness.results`` on one big ``.json`` log (issue 51 item 9).

A ``.json`` log keeps every transcript inline, so the file is as big as the run's messages;
users report hours and out-of-memory kills on such logs. The reader streams any ``.json``
log over 64 MB. This test writes one log of ``RESULTS_PERF_BIG_MB`` megabytes (default 160:
CI; the 1 GB figure is run by hand) from a real Inspect template, and reads it in fresh
processes, streamed and (for the comparison) whole::

    RESULTS_PERF_BIG_MB=1024 .venv/bin/pytest tests/perf/test_results_big_log_perf.py -s

The big log is written under the system temp dir and removed afterwards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from _make_logs import _read_template, _template_log  # noqa: E402

pytestmark = [pytest.mark.perf, pytest.mark.slow]

SIZE_MB = int(os.environ.get("RESULTS_PERF_BIG_MB", "160"))
PAD = 100_000  # characters of transcript per sample

_CHILD = """
import json, sys, time
import harness.results as results
path, mode = sys.argv[1], sys.argv[2]
if mode == "whole":
    results._STREAM_BYTES = 1 << 62  # the reader before streaming: load the file whole
start = time.perf_counter()
df = results.read_results(path)
seconds = time.perf_counter() - start
with open("/proc/self/status") as status:
    hwm = next(line for line in status if line.startswith("VmHWM:"))
print(json.dumps({"seconds": seconds, "peak_mb": int(hwm.split()[1]) / 1024,
                  "samples": df.select("sample_id", "epoch").n_unique(), "rows": df.height}))
"""

_BASELINE = """
import json
import harness.results, polars  # what every read imports, nothing read
with open("/proc/self/status") as status:
    hwm = next(line for line in status if line.startswith("VmHWM:"))
print(json.dumps({"peak_mb": int(hwm.split()[1]) / 1024}))
"""


def write_big_log(path: Path, size_mb: int) -> int:
    """A ``.json`` log of about ``size_mb`` MB: the template's header, then samples each
    carrying a ~100 kB transcript; returns the number of samples."""
    with tempfile.TemporaryDirectory() as scratch:
        template = _read_template(_template_log(Path(scratch)))
    header = dict(template["header"])
    header.pop("samples", None)
    header.pop("reductions", None)
    good = template["samples"]["good"]
    n = max(1, size_mb * 1_000_000 // (PAD + 2_000))
    filler = ("lorem ipsum dolor sit amet " * (PAD // 27 + 1))[:PAD]
    with path.open("w", encoding="utf-8") as out:
        out.write(json.dumps(header)[:-1] + ', "samples": [')
        for i in range(1, n + 1):
            sample = dict(good)
            sample["id"] = i
            sample["uuid"] = f"big-{i}"
            sample["scores"] = {"exact": {"value": "C" if i % 3 else "I", "answer": str(i)}}
            sample["messages"] = [*good.get("messages", []),
                                  {"role": "user", "content": filler, "source": "input"}]
            out.write(("," if i > 1 else "") + json.dumps(sample))
        out.write('], "reductions": []}')
    return n


@pytest.fixture(scope="module")
def big_log() -> Iterator[tuple[Path, int]]:
    with tempfile.TemporaryDirectory(prefix="evalsuite-big-log-") as folder:
        path = Path(folder) / "big.json"
        n = write_big_log(path, SIZE_MB)
        yield path, n


def run(code: str, *args: str) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", code, *args], check=True,
                         capture_output=True, text=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def test_big_json_log_streams_in_bounded_memory(big_log: tuple[Path, int]) -> None:
    path, n = big_log
    size_mb = path.stat().st_size / 2**20
    base = run(_BASELINE)["peak_mb"]
    streamed = run(_CHILD, str(path), "stream")
    whole = run(_CHILD, str(path), "whole") if size_mb <= 400 else None
    print(f"\n{size_mb:.0f} MB .json log, {n} samples: streamed {streamed['seconds']:.1f} s, "
          f"peak {streamed['peak_mb']:.0f} MB (imports alone {base:.0f} MB)"
          + (f"; read whole {whole['seconds']:.1f} s, peak {whole['peak_mb']:.0f} MB"
             if whole else ""))
    assert streamed["samples"] == n
    # the bound: a log read within 1 GB, whatever its size
    assert streamed["peak_mb"] <= 1024
    # streaming: what the read adds to the imports is a small fraction of the file
    assert streamed["peak_mb"] - base < 0.25 * size_mb + 64
    if whole is not None:
        assert whole["samples"] == n
        assert streamed["peak_mb"] - base < 0.5 * (whole["peak_mb"] - base)
