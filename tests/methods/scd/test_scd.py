"""SCD: codes rebuild the consumer's cache; lossless codes with the producer as consumer
reproduce it, code bytes fall with the rank, and the TTFT model behaves as stated."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

HAVE_TORCH = all(importlib.util.find_spec(m) for m in ("torch", "transformers"))
pytestmark = pytest.mark.skipif(not HAVE_TORCH, reason="needs torch + transformers")


def _context(tiny: Any, n: int = 24) -> tuple[list[Any], dict[int, Any]]:
    import torch

    from methods.kv.cache import layers_of

    ids = torch.arange(2, 2 + n).view(1, -1)
    with torch.no_grad():
        out = tiny(input_ids=ids, use_cache=True, output_hidden_states=True)
    hidden = {i: out.hidden_states[i][0] for i in range(4)}
    return layers_of(out.past_key_values), hidden


def test_patch_layers_are_spread() -> None:
    from methods.scd.scd import patch_layers

    assert patch_layers(30, 0) == []
    assert patch_layers(30, 3) == [0, 10, 20]
    assert patch_layers(4, 9) == [0, 1, 2, 3]


@pytest.mark.parametrize("patch", [[], [0, 2], [0, 1, 2, 3]])
def test_lossless_codes_rebuild_producer_cache(tiny: Any, patch: list[int]) -> None:
    import torch

    from methods.scd.scd import rebuild

    layers, hidden = _context(tiny)
    rebuilt, _ = rebuild(tiny, layers, {i: hidden[i] for i in patch}, rank=None)
    for (k, v), (rk, rv) in zip(layers, rebuilt, strict=True):
        assert torch.allclose(rk, k, atol=1e-5) and torch.allclose(rv, v, atol=1e-5)


def test_code_bytes_fall_with_rank(tiny: Any) -> None:
    from methods.kv.cache import kv_bytes
    from methods.scd.scd import rebuild

    layers, hidden = _context(tiny, 60)
    sent = {rank: rebuild(tiny, layers, {0: hidden[0]}, rank)[1] for rank in (None, 16, 8, 2)}
    assert sent[None] == kv_bytes(layers) - 2 * 2 * 16 * 60 * 4 + 60 * 64 * 4  # layer 0: h
    assert sent[2] < sent[8] < sent[16] < sent[None]


def test_patch_layers_use_consumer_weights(tiny: Any) -> None:
    """A consumer with different k/v projections gets different keys at patch layers only."""
    import copy

    import torch

    from methods.scd.scd import rebuild

    layers, hidden = _context(tiny)
    consumer = copy.deepcopy(tiny)
    with torch.no_grad():
        consumer.model.layers[2].self_attn.k_proj.weight.mul_(1.5)
    rebuilt, _ = rebuild(consumer, layers, {2: hidden[2]}, rank=None)
    assert torch.allclose(rebuilt[1][0], layers[1][0], atol=1e-5)  # reuse: producer's
    assert not torch.allclose(rebuilt[2][0], layers[2][0], atol=1e-3)  # patch: consumer's


def test_ttft_model_is_a_bandwidth_model() -> None:
    from types import SimpleNamespace

    from methods.scd.scd import ttft_model

    config = SimpleNamespace(num_key_value_heads=3, head_dim=64, hidden_size=576,
                             num_attention_heads=9)
    slow = ttft_model(config, 500, 10**6, 2, 135 * 10**6, 1.0, 50.0)
    fast = ttft_model(config, 500, 10**6, 2, 135 * 10**6, 100.0, 50.0)
    small = ttft_model(config, 500, 10**5, 2, 135 * 10**6, 1.0, 50.0)
    assert fast["ttft_scd_ms"] < slow["ttft_scd_ms"] and small["ttft_scd_ms"] < slow["ttft_scd_ms"]
    assert slow["ttft_prefill_ms"] == pytest.approx(2 * 135e6 * 500 / 50e9 * 1e3)
    # 1 MB at 1 Gbit/s is 8 ms of transfer
    assert slow["ttft_scd_ms"] - fast["ttft_scd_ms"] == pytest.approx(8 - 0.08, rel=1e-6)


@pytest.mark.slow
def test_method_lossless_with_producer_as_consumer_is_exact(lm: Any, chat: str) -> None:
    """Acceptance: lossless codes, producer = consumer -> the model's own greedy tokens."""
    from harness.plugins.whitebox_method import resolve_method

    ref = lm.generate_batch([chat], max_new_tokens=8)[0].tokens
    for patch in (0, 2):
        method = resolve_method("scd", consumer="base", patch=patch, max_tokens=8)
        out = lm.generate_batch([chat], max_new_tokens=8, method=method)[0]
        assert out.tokens == ref
        assert out.data["metadata"]["kv"]["exact"] is True


@pytest.mark.slow
def test_method_code_bytes_fall_with_rank(lm: Any, chat: str) -> None:
    from harness.plugins.whitebox_method import resolve_method

    sent = {}
    for rank in (None, 32, 8):
        method = resolve_method("scd", consumer="base", rank=rank, max_tokens=2,
                                reference=False)
        kv = lm.generate_batch([chat], max_new_tokens=2, method=method)[0].data["metadata"]["kv"]
        sent[rank] = kv["kv_bytes"]
        assert kv["ttft_scd_ms"] > 0
    assert sent[8] < sent[32] < sent[None]
