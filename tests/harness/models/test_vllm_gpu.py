"""vLLM serves the embedded model's weights on a GPU (marker ``gpu``: never run in CI).

The SmolLM2 GGUF is dequantised once into a local HF folder (no download), then Inspect's
own ``vllm/`` provider serves that folder on 127.0.0.1 and runs a real task.
"""

import importlib.util
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu


def _cuda() -> bool:
    if importlib.util.find_spec("torch") is None:
        return False
    import torch

    return bool(torch.cuda.is_available())


@pytest.mark.skipif(importlib.util.find_spec("vllm") is None or not _cuda(),
                    reason="needs a CUDA GPU and vllm (pip install -e '.[gpu]')")
def test_vllm_serves_smollm2_through_inspect(tmp_path: Path) -> None:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    from benchmarks.arithmetic.arithmetic import arithmetic
    from harness.models.whitebox import ensure_hf_copy

    folder = ensure_hf_copy()
    model = get_model(f"vllm/{folder}", host="127.0.0.1", gpu_memory_utilization=0.3,
                      max_model_len=2048)
    log = inspect_eval(arithmetic(n=4, agent="generate"), model=model, log_dir=str(tmp_path),
                       display="plain")[0]
    assert log.status == "success", log.error
    assert log.stats.model_usage, "vLLM reported no token usage"
    usage = next(iter(log.stats.model_usage.values()))
    assert usage.output_tokens > 0
