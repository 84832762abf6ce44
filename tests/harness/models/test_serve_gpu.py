"""The served path against ``vllm serve`` on a GPU (marker ``gpu``: never run in CI).

The same two samples as ``test_serve.py`` (one CausalGame episode with the benchmark's own
agent, one WorldTravel sample with a forced first call), with the 0.5B ladder model's
dequantised HF folder served by ``vllm serve`` on 127.0.0.1 with Qwen's tool-call parser
(``hermes``), reached through Inspect's ``vllm/`` provider with a base URL, exactly as a user
reaches a remote deployment.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu


def _cuda() -> bool:
    if importlib.util.find_spec("torch") is None:
        return False
    import torch

    return bool(torch.cuda.is_available())


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.skipif(importlib.util.find_spec("vllm") is None or not _cuda(),
                    reason="needs a CUDA GPU and vllm (pip install -e '.[gpu]')")
def test_benchmarks_through_vllm_serve(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.solver import chain, generate, use_tools

    from harness.models.whitebox import ladder_hf_copy

    folder = ladder_hf_copy("qwen2.5-coder-0.5b")
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(folder),
         "--served-model-name", "qwen2.5-coder-0.5b", "--host", "127.0.0.1", "--port",
         str(port), "--max-model-len", "8192", "--gpu-memory-utilization", "0.3",
         "--enable-auto-tool-choice", "--tool-call-parser", "hermes"],
        env={**os.environ, "HF_HUB_OFFLINE": "1"})
    try:
        deadline = time.time() + 600
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5)
                break
            except OSError:
                assert server.poll() is None, "vllm serve exited while starting"
                assert time.time() < deadline, "vllm serve did not answer within 10 min"
                time.sleep(3)
        monkeypatch.setenv("VLLM_BASE_URL", f"http://127.0.0.1:{port}/v1")
        monkeypatch.setenv("VLLM_API_KEY", "local")
        root = Path(__file__).resolve().parents[3]
        forced = chain(use_tools(tool_choice="any"), generate(tool_calls="single"))
        for spec, args, solver in [
            ("benchmarks/causalgame/causalgame.py@causalgame",
             {"epochs": 1, "scenarios": "antenna_trap", "sandbox": "none"}, None),
            ("benchmarks/worldtravel/worldtravel.py@worldtravel", {"max_constraints": 8}, forced),
        ]:
            log = inspect_eval(str(root / spec), model="vllm/qwen2.5-coder-0.5b", task_args=args,
                               solver=solver, limit=1, message_limit=8, log_dir=str(tmp_path),
                               display="plain")[0]
            assert log.status == "success", log.error
            made = [c for m in log.samples[0].messages if m.role == "assistant"  # type: ignore[index]
                    for c in (m.tool_calls or [])]  # type: ignore[union-attr]
            assert made, f"{spec}: no tool call came back from vllm serve"
    finally:
        server.terminate()
        server.wait(timeout=60)
