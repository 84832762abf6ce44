"""The GPU scripts of issue 49 item 5 (``methods/studies/<study>/gpu/gpu.sh``).

CPU tiers check what can be checked without a GPU: each script parses, stops with one line
and exit code 2 when a requirement is missing (no model folder, no Python, no GPU), writes
only to runs its study declares, and calls only ``harness`` commands that exist; SCD's timing
program measures what its doc says on a tiny random Llama. The ``gpu`` test runs each script
for real (never in CI): it needs MODEL (xKV, MedREK), LIGHTWM_MODEL plus vLLM (LightWM) and
PRODUCER/CONSUMER (SCD) pointing at local Hugging Face folders."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
STUDIES = ROOT / "methods" / "studies"
SCRIPTS = {name: STUDIES / name / "gpu" / "gpu.sh"
           for name in ("kv_xkv_qwen", "lightwm_household_qwen", "medversa_editors", "kv_scd")}
#: the variable each script needs to point at weights, in GPU mode
WEIGHTS = {"kv_xkv_qwen": "MODEL", "lightwm_household_qwen": "MODEL",
           "medversa_editors": "MODEL", "kv_scd": "PRODUCER"}
PYTHON = str(Path(sys.executable))


def run_script(name: str, env: dict[str, str],
               timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The script with ``env`` on top of a clean copy of ours (no SMOKE, no MODEL leaking in)."""
    base = {k: v for k, v in os.environ.items()
            if k not in ("SMOKE", "MODEL", "PRODUCER", "CONSUMER", "LOGS", "REPORT", "OUT")}
    return subprocess.run(["bash", str(SCRIPTS[name])], env={**base, "PYTHON": PYTHON, **env},
                          capture_output=True, text=True, timeout=timeout, check=False)


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_script_parses(name: str) -> None:
    assert subprocess.run(["bash", "-n", str(SCRIPTS[name])], check=False).returncode == 0


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_missing_weights_stop_with_one_line(name: str) -> None:
    var = WEIGHTS[name]
    for env, says in (({}, f"set {var}"), ({var: "/nonexistent"}, "no config.json")):
        done = run_script(name, env)
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and says in lines[0] and name in lines[0], done.stderr
        assert done.stdout == ""


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_missing_python_stops(name: str) -> None:
    done = run_script(name, {"PYTHON": "/nonexistent/python", "SMOKE": "1"})
    assert done.returncode == 2 and "no Python at PYTHON=/nonexistent/python" in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_no_gpu_stops_before_any_work(name: str, tmp_path: Path) -> None:
    """With weights that look right but no CUDA device, the script says so (torch import)."""
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    (tmp_path / "config.json").write_text("{}")
    env = {"MODEL": str(tmp_path), "PRODUCER": str(tmp_path), "CONSUMER": str(tmp_path),
           "LOGS": str(tmp_path / "logs"), "OUT": str(tmp_path / "out.json")}
    done = run_script(name, env)
    assert done.returncode == 2 and "no CUDA GPU visible to torch" in done.stderr, done.stderr
    assert not (tmp_path / "logs").exists() and not (tmp_path / "out.json").exists()


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_gpu_runs_are_declared(name: str) -> None:
    """The folder a GPU run writes by default is a run its study.yaml declares, so
    ``harness study regenerate --check`` accepts its logs once they are committed."""
    from harness.factorial.protocol_study import load_study_folder

    text = SCRIPTS[name].read_text()
    runs = set(re.findall(r"\$STUDY/logs/([A-Za-z0-9_.-]+)", text))
    assert runs, "the script names no run folder"
    declared = set(load_study_folder(STUDIES / name).runs)
    assert runs <= declared, f"{runs - declared} not declared in {name}/study.yaml"


def test_harness_commands_exist() -> None:
    """Every ``harness.cli`` command line the scripts run is a command of the CLI."""
    from typer.testing import CliRunner

    from harness.cli import app

    commands = {tuple(m.split()) for path in SCRIPTS.values()
                for m in re.findall(r"-m harness\.cli ((?:[a-z-]+ ?){1,2})", path.read_text())}
    assert ("study", "run") in {c[:2] for c in commands}
    for words in commands:
        words = tuple(w for w in words if w)
        result = CliRunner().invoke(app, [*words, "--help"])
        assert result.exit_code == 0, (words, result.output)


def _ttft() -> Any:
    path = SCRIPTS["kv_scd"].parent / "ttft.py"
    spec = importlib.util.spec_from_file_location("scd_gpu_ttft", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ttft_measures_the_stated_quantities(tiny: Any) -> None:
    """On a tiny random Llama (producer = consumer): transfer is the code's bytes over the
    stated bandwidth, the raw cache's bytes follow the model's shape, a lower rank ships
    fewer bytes, and the speedup is prefill over transfer + rebuild."""
    import torch

    from harness.models.whitebox import WhiteBoxLM

    ttft = _ttft()
    lm = WhiteBoxLM(tiny, tokenizer=None)
    ids = torch.randint(0, 96, (1, 40), generator=torch.Generator().manual_seed(0))
    full = ttft.measure(lm, lm, ids, None, 2, 10.0, "cpu")
    low = ttft.measure(lm, lm, ids, 2, 2, 10.0, "cpu")
    assert low["code_bytes"] < full["code_bytes"]
    # 4 layers x 2 kv heads x head_dim 16 x (K and V) x 39 context tokens x 4 bytes
    assert full["raw_kv_bytes"] == 4 * 2 * 16 * 2 * 39 * 4
    for row in (full, low):
        assert row["transfer_ms"] == pytest.approx(1e3 * row["code_bytes"] * 8 / 10e9)
        assert row["speedup"] == pytest.approx(
            row["prefill_ms"] / (row["transfer_ms"] + row["rebuild_ms"]))
        assert row["prefill_ms"] > 0 and row["rebuild_ms"] > 0


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_script_runs_on_the_gpu(name: str, tmp_path: Path) -> None:
    """The real run, into a temporary folder: exit 0 and the promised last JSON line."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    needs = {"kv_scd": ("PRODUCER", "CONSUMER"),
             "lightwm_household_qwen": ("LIGHTWM_MODEL",)}.get(name, ("MODEL",))
    missing = [v for v in needs if not os.environ.get(v)]
    if missing:
        pytest.skip(f"set {', '.join(missing)} to local Hugging Face folders")
    env = {v: os.environ[v] for v in needs}
    if name == "lightwm_household_qwen":
        env["MODEL"] = env.pop("LIGHTWM_MODEL")
    env.update(LOGS=str(tmp_path / "logs" / "gpu"), REPORT=str(tmp_path / "report"),
               OUT=str(tmp_path / "logs" / "gpu" / "ttft.json"))
    done = run_script(name, env, timeout=1800)
    assert done.returncode == 0, done.stderr[-2000:]
    last = json.loads(done.stdout.strip().splitlines()[-1])
    if name == "kv_scd":
        assert last["max_speedup"] > 0 and last["device_name"] != "cpu"
    else:
        assert last["verdict"] in ("reproduces", "partly", "contradicted", "untestable")
        assert last["contrast"]["n_items"] > 0
