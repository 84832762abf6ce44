"""FormulaCode task: samples, compose policy, reference agents end to end in docker."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from benchmarks.formulacode.agents import patched_files, short_circuit
from benchmarks.formulacode.formulacode import COMPOSE, record_to_sample
from benchmarks.formulacode.prompts import SENTINEL
from environments.formulacode.records import load_records
from harness.sandbox.docker import docker_status, policy_violations

ROOT = Path(__file__).parents[3]


def test_record_to_sample_on_a_real_record() -> None:
    record = load_records("pack")[0]
    sample = record_to_sample(record)
    assert sample.id == record.task_id
    assert isinstance(sample.input, str)
    assert sample.input.startswith("# Performance Optimization Task")
    assert record.final_md.strip() in sample.input and SENTINEL in sample.input
    assert record.patch not in sample.input  # the expert's solution is never shown
    assert sample.metadata and sample.metadata["patch"] == record.patch
    assert sample.metadata["pack_slug"] == record.extra["pack_slug"]


def test_compose_follows_the_sandbox_policy() -> None:
    assert policy_violations(COMPOSE) == []


def test_break_agent_short_circuits_every_function() -> None:
    src = ('def f(x):\n    """Doc."""\n    return x + 1\n\n\n'
           "class A:\n    def g(self):\n        y = 2\n        return y\n")
    out = short_circuit(src)
    namespace: dict = {}
    exec(out, namespace)  # noqa: S102 - our own fixture
    assert namespace["f"](5) == 0 and namespace["A"]().g() == 0
    assert patched_files("--- a/p/x.py\n+++ b/p/x.py\n@@ -1 +1 @@\n") == ["p/x.py"]


def _docker_ready() -> None:
    st = docker_status()
    if not (st["daemon_running"] and st["compose_ok"] and st["base_image"]):
        pytest.skip(f"docker not ready: {st}")


def _scores(log_dir: Path) -> list[dict]:
    logs = sorted(log_dir.glob("*.eval"))
    assert logs, "no log written"
    with zipfile.ZipFile(logs[-1]) as z:
        names = [n for n in z.namelist() if n.startswith("samples/")]
        return [json.loads(z.read(n))["scores"]["formulacode_scorer"] for n in names]


@pytest.mark.docker
def test_oracle_cli_eval_limit_3(tmp_path: Path) -> None:
    """The README's command, with smoke-run timing: the oracle passes every gate and is never
    an infra failure."""
    _docker_ready()
    inspect = str(Path(sys.executable).parent / "inspect")
    cmd = [inspect, "eval", "benchmarks/formulacode", "--model", "none",
           "--solver", "benchmarks/formulacode/agents.py@oracle",
           # three of the cheapest tasks to grade, all measured in callgrind cycles
           # (deterministic under load, one round whatever `rounds` says); each expert's
           # geometric-mean speedup is above 1x (1.63x, 1.79x, 1.18x in the acceptance run);
           # with runmax in standardize's place the test took ~35 s more (427 s vs 393 s)
           "-T", "tasks=linsolve,batcheval,standardize", "-T", "rounds=3", "-T", "max_rounds=3",
           "-T", "sample_budget=0.05", "--display", "plain", "--log-dir", str(tmp_path)]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    scores = _scores(tmp_path)
    assert len(scores) == 3
    for score in scores:
        value = score["value"]
        assert value["success"] == 1.0 and value["infra_failure"] == 0.0, score["explanation"]
        assert value["triage"] == 1.0  # the oracle touches exactly the expert's functions
        # the oracle is the expert: its speedup is the expert's, above 1x on each task
        assert value["speedup"] > 1.0 and value["reward"] > 1.0


@pytest.mark.docker
@pytest.mark.slow
def test_break_agent_is_gated_in_docker(tmp_path: Path) -> None:
    """The break agent fails the repository's tests: gated (reward -1, speedup 1) whatever
    the timings, so they are a one-round CPU-clock smoke run, not linsolve's declared
    callgrind cycles (which took ~40 s more of this test for numbers the gate discards)."""
    _docker_ready()
    from inspect_ai import eval as inspect_eval

    from benchmarks.formulacode.agents import break_
    from benchmarks.formulacode.formulacode import formulacode

    task = formulacode(tasks="linsolve", rounds=1, max_rounds=1, repeat=1, sample_budget=0.05,
                       timer="process_cpu")
    log = inspect_eval(task, model="none", solver=break_(), log_dir=str(tmp_path),
                       display="none")[0]
    assert log.status == "success" and log.samples
    score = log.samples[0].scores["formulacode_scorer"]  # type: ignore[index]
    value = dict(score.value)  # type: ignore[arg-type]
    assert value["success"] == 0.0 and value["reward"] == -1.0, score.explanation
    assert value["speedup"] == 1.0 and value["infra_failure"] == 0.0
    assert score.metadata and score.metadata["failure"] == "tests failed"
