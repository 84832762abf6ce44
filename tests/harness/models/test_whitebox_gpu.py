"""The white-box backend on CUDA, and vLLM vs white-box tokens/s (marker ``gpu``).

Skips cleanly without a CUDA GPU (and the vLLM comparison without ``vllm``). On a GPU:
greedy tokens on CUDA equal the CPU's for short replies (fp32 both), and both backends
decode the same batch so the printed tokens/s compare like for like (no timed assertion).
"""

from __future__ import annotations

import importlib.util
import time

import pytest

pytestmark = pytest.mark.gpu


def _cuda() -> bool:
    if importlib.util.find_spec("torch") is None:
        return False
    import torch

    return bool(torch.cuda.is_available())


PROMPTS = [f"What is {i} + {i + 7}? Reply with the number only." for i in range(16)]


@pytest.mark.skipif(not _cuda(), reason="needs a CUDA GPU")
def test_whitebox_on_cuda_matches_cpu_greedy_tokens() -> None:
    from harness.models.whitebox import WhiteBoxLM

    cpu = WhiteBoxLM.load(device="cpu")
    gpu = WhiteBoxLM.load(device="cuda")
    chats = [[{"role": "user", "content": p}] for p in PROMPTS[:2]]
    a = [g.tokens for g in cpu.generate_batch(chats, max_new_tokens=8)]
    b = [g.tokens for g in gpu.generate_batch(chats, max_new_tokens=8)]
    assert a == b
    esamp = gpu.generate_batch(chats, max_new_tokens=8, method="esamp")
    assert all(g.tokens for g in esamp)


@pytest.mark.skipif(not _cuda() or importlib.util.find_spec("vllm") is None,
                    reason="needs a CUDA GPU and vllm (pip install -e '.[gpu]')")
def test_vllm_vs_whitebox_tokens_per_second() -> None:
    from vllm import LLM, SamplingParams

    from harness.models.whitebox import WhiteBoxLM, ensure_hf_copy

    folder = ensure_hf_copy()
    lm = WhiteBoxLM.load(folder, device="cuda")
    chats = [lm.chat_prompt([{"role": "user", "content": p}]) for p in PROMPTS]
    start = time.perf_counter()
    ours = lm.generate_batch(chats, max_new_tokens=64)
    ours_rate = sum(len(g.tokens) for g in ours) / (time.perf_counter() - start)
    llm = LLM(model=str(folder), gpu_memory_utilization=0.3, max_model_len=2048)
    start = time.perf_counter()
    outs = llm.generate(chats, SamplingParams(temperature=0.0, max_tokens=64))
    vllm_rate = sum(len(o.outputs[0].token_ids) for o in outs) / (time.perf_counter() - start)
    print(f"tokens/s batch 16: whitebox {ours_rate:.0f}, vllm {vllm_rate:.0f}")
    assert ours_rate > 0 and vllm_rate > 0
