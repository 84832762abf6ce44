"""Fixtures shared by the method tests: a tiny random Llama and the embedded SmolLM2 through
the white-box backend (the KV methods: xKV, ArborKV, SCD and the cache plumbing), and the
editors' offline stand-ins: a bag-of-words sentence encoder, a byte tokenizer and two tiny
Llamas (MedVersa's editors and the parametric ones).

Here, one folder above the paper folders, because the tests of several papers share them
(the KV methods left ``tests/methods/kv/``, MedREK left ``tests/methods/editors/``; issue 45).
Not in ``tests/conftest.py``: the test tree has no ``__init__.py`` files, so pytest puts a
conftest's folder on ``sys.path``, and ``tests/`` there makes ``tests/benchmarks`` shadow the
``benchmarks`` package for every test module."""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
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

class HashEncoder:
    """Bag-of-words sentence encoder: unit vectors from hashed lowercase words."""

    dim = 384

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().replace("?", " ").split():
                h = int(hashlib.md5(word.encode()).hexdigest(), 16)
                out[i, h % self.dim] += 1.0
            out[i] /= max(float(np.linalg.norm(out[i])), 1e-9)
        return out


class CharTokenizer:
    """One id per byte (mod a small vocab); enough for running a tiny Llama."""

    eos_token_id = 1
    pad_token_id = None

    def __init__(self, vocab: int = 64) -> None:
        self.vocab = vocab

    def __call__(self, text: str, add_special_tokens: bool = True) -> Any:
        ids = [2 + (b % (self.vocab - 2)) for b in text.encode()]
        return SimpleNamespace(input_ids=ids)

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        return "".join(chr(97 + (i % 26)) for i in ids)


@pytest.fixture(scope="session")
def tiny_llama() -> Any:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=512)
    model = LlamaForCausalLM(config)
    model.eval()
    return model


@pytest.fixture()
def hash_encoder() -> HashEncoder:
    return HashEncoder()


@pytest.fixture()
def char_tokenizer() -> CharTokenizer:
    return CharTokenizer()


@pytest.fixture(scope="session")
def confident_llama() -> Any:
    """A tiny Llama with large weights: unlike the default init (near-uniform outputs
    whatever the input) its predictions depend on its inputs, so a soft prompt can move them."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(
        vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
        initializer_range=0.5))
    model.eval()
    return model
