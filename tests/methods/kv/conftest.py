"""Fixtures for the KV-method tests: a tiny random Llama (fast, exercises shapes and maths)
and the embedded SmolLM2 through the white-box backend (exactness against the real model)."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

HAVE_TORCH = all(importlib.util.find_spec(m) for m in ("torch", "transformers"))


@pytest.fixture(scope="session")
def tiny() -> Any:
    """A 4-layer random Llama with GQA (2 kv heads of 4), fixed seed, eval mode, 1 thread."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.set_num_threads(1)
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=96, hidden_size=64, intermediate_size=128, num_hidden_layers=4,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
    )
    model = LlamaForCausalLM(config)
    # sharpen the output so greedy choices are not near-ties of a random init
    with torch.no_grad():
        model.lm_head.weight.mul_(8.0)
    return model.eval()


@pytest.fixture(scope="session")
def lm() -> Any:
    """The embedded SmolLM2 (dequantised once into the model cache)."""
    if importlib.util.find_spec("gguf") is None:
        pytest.skip("needs the cpu extra: torch, transformers, gguf")
    import torch

    from harness.models.whitebox import WhiteBoxLM

    torch.set_num_threads(1)
    return WhiteBoxLM.load()


@pytest.fixture(scope="session")
def chat(lm: Any) -> str:
    """A short chat prompt (about 40 tokens) for token-exactness checks."""
    return str(lm.chat_prompt([{"role": "user", "content": "Name three colours of the sky."}]))
