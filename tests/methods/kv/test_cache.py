"""Shared KV plumbing: RoPE undo/redo, cache copies, byte accounting, greedy decoding."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

HAVE_TORCH = all(importlib.util.find_spec(m) for m in ("torch", "transformers"))

pytestmark = pytest.mark.skipif(not HAVE_TORCH, reason="needs torch + transformers")


def test_unrope_inverts_rope_at_every_position(tiny: Any) -> None:
    import torch

    from methods.kv.cache import rope, rope_tables, unrope

    cos, sin = rope_tables(tiny, torch.arange(50))
    keys = torch.randn(1, 2, 50, 16, generator=torch.Generator().manual_seed(1))
    assert torch.allclose(unrope(rope(keys, cos, sin), cos, sin), keys, atol=1e-5)
    assert not torch.allclose(rope(keys, cos, sin), keys, atol=1e-3)  # it does rotate


def test_cached_keys_are_roped_pre_rope_keys(tiny: Any) -> None:
    """Undoing RoPE on the cache gives k_proj(norm(h)): the basis xKV factorises."""
    import torch

    from methods.kv.cache import layers_of, prefill, rope_tables, unrope

    ids = torch.arange(1, 21).view(1, -1)
    out = tiny(input_ids=ids, output_hidden_states=True, use_cache=True)
    _, cache = prefill(tiny, ids)
    keys = layers_of(cache)[0][0]
    layer = tiny.model.layers[0]
    with torch.no_grad():
        raw = layer.self_attn.k_proj(layer.input_layernorm(out.hidden_states[0]))
    raw = raw.view(1, 20, 2, 16).transpose(1, 2)
    cos, sin = rope_tables(tiny, torch.arange(20))
    assert torch.allclose(unrope(keys, cos, sin), raw, atol=1e-5)


def test_make_cache_copies_and_counts_bytes(tiny: Any) -> None:
    import torch

    from methods.kv.cache import full_kv_bytes, kv_bytes, layers_of, make_cache, prefill

    _, cache = prefill(tiny, torch.arange(1, 11).view(1, -1))
    copy = make_cache(layers_of(cache))
    layers_of(copy)[0][0].zero_()
    assert layers_of(cache)[0][0].abs().sum() > 0  # the original is untouched
    # 2 (k, v) x 4 layers x 2 kv heads x 16 dims x 10 tokens x 4 bytes
    assert kv_bytes(cache) == full_kv_bytes(tiny.config, 10) == 2 * 4 * 2 * 16 * 10 * 4


def test_greedy_from_cache_matches_generate(tiny: Any) -> None:
    import torch

    from methods.kv.cache import greedy, prefill

    ids = torch.tensor([[5, 17, 33, 2, 9, 41]])
    logits, cache = prefill(tiny, ids)
    tokens = greedy(tiny, logits, cache, 8)
    ref = tiny.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=8,
                        do_sample=False, pad_token_id=0, eos_token_id=None)
    assert tokens == ref[0, ids.shape[1]:].tolist()


def test_agreement_metrics() -> None:
    from methods.kv.cache import prefix_agreement

    assert prefix_agreement([1, 2, 3, 4], [1, 2, 3, 4]) == 1.0
    assert prefix_agreement([1, 2, 9, 4], [1, 2, 3, 4]) == 0.5
    assert prefix_agreement([], [1]) == 0.0


def test_flag_reads_text_options() -> None:
    from methods.kv.cache import flag

    assert [flag(v) for v in ("false", "0", "no", "true", "1", False, True)] == [
        False, False, False, True, True, False, True]
