"""Per-sample overhead of the scripted provider against bare Inspect.

    .venv/bin/pytest tests/perf/test_scripted_perf.py -s                      # numbers printed
    .venv/bin/pytest tests/perf/test_scripted_perf.py -s --benchmark-enable   # + pytest-benchmark
    SCRIPTED_PERF_N=400 ...                                                   # samples per eval

Bare Inspect here is ``mockllm/model`` with outputs that carry ``usage`` (so it never calls
tiktoken), the cheapest model Inspect ships; the anchor on these machines is ~21 ms per
1-turn sample and ~15 ms per extra tool turn. The target is a 1-turn scripted sample within
1.1x of bare Inspect. No assertion is made on timings: the ratio is printed and recorded.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import generate

pytestmark = pytest.mark.perf

N = int(os.environ.get("SCRIPTED_PERF_N", "200"))


def _task(n: int) -> Task:
    samples = [Sample(id=i, input=f"Say {i}.", target="42") for i in range(n)]
    return Task(dataset=samples, solver=generate(), scorer=match())


def _bare_model(n: int) -> Any:
    usage = ModelUsage(input_tokens=2, output_tokens=1, total_tokens=3)
    outputs = []
    for _ in range(n):
        out = ModelOutput.from_content(model="mockllm/model", content="42")
        out.usage = usage
        outputs.append(out)
    return get_model("mockllm/model", custom_outputs=outputs)


def _per_sample_ms(model: Any, log_dir: Path, n: int) -> float:
    start = time.perf_counter()
    log = inspect_eval(_task(n), model=model, log_dir=str(log_dir), display="none",
                       model_args={} if not isinstance(model, str) else {"answer": 42})[0]
    elapsed = time.perf_counter() - start
    assert log.status == "success" and log.results is not None
    assert log.results.scores[0].metrics["accuracy"].value == 1.0
    return 1000 * elapsed / n


@pytest.mark.slow
def test_scripted_one_turn_overhead_vs_bare_inspect(tmp_path: Path, benchmark: Any) -> None:
    # warm both paths once (imports, registry) so neither pays start-up in the timing
    _per_sample_ms(_bare_model(5), tmp_path / "warm-bare", 5)
    _per_sample_ms("scripted/fixed", tmp_path / "warm-scripted", 5)
    bare = _per_sample_ms(_bare_model(N), tmp_path / "bare", N)
    scripted = benchmark.pedantic(_per_sample_ms, args=("scripted/fixed", tmp_path / "s", N),
                                  rounds=1, iterations=1)
    benchmark.extra_info.update(bare_ms=bare, scripted_ms=scripted, ratio=scripted / bare)
    print(f"\nper 1-turn sample over {N}: bare Inspect {bare:.1f} ms, "
          f"scripted {scripted:.1f} ms, ratio {scripted / bare:.2f}")
