"""xKV: cross-layer SVD of the prefill cache; exact at full rank, bytes follow the ratio."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

HAVE_TORCH = all(importlib.util.find_spec(m) for m in ("torch", "transformers"))

pytestmark = pytest.mark.skipif(not HAVE_TORCH, reason="needs torch + transformers")


def test_groups_cover_layers_once() -> None:
    from methods.xkv.xkv import groups_of

    assert groups_of(30, 5) == [list(range(i, i + 5)) for i in range(0, 30, 5)]
    assert groups_of(7, 3) == [[0, 1, 2], [3, 4, 5], [6]]
    with pytest.raises(ValueError):
        groups_of(4, 0)


@pytest.mark.parametrize("tokens,features", [(40, 32), (300, 960), (10, 192)])
@pytest.mark.parametrize("ratio", [1.5, 2, 4, 8])
def test_rank_for_ratio_fits_budget(tokens: int, features: int, ratio: float) -> None:
    from methods.xkv.xkv import rank_for_ratio

    rank = rank_for_ratio(tokens, features, ratio)
    assert rank >= 1
    if rank > 1:  # rank 1 is the floor even when the budget is smaller
        assert rank * (tokens + features) <= tokens * features / ratio
        assert (rank + 1) * (tokens + features) > tokens * features / ratio


@pytest.mark.parametrize("group", [1, 2, 4])
def test_full_rank_reconstructs_cache(tiny: Any, group: int) -> None:
    import torch

    from methods.kv.cache import layers_of, prefill
    from methods.xkv.xkv import compress

    _, cache = prefill(tiny, torch.arange(3, 33).view(1, -1))
    layers = layers_of(cache)
    packed, _ = compress(tiny, layers, group=group, rank=10_000)
    for (k, v), (pk, pv) in zip(layers, packed, strict=True):
        assert torch.allclose(pk, k, atol=1e-4) and torch.allclose(pv, v, atol=1e-4)


def test_full_rank_keeps_greedy_tokens(tiny: Any) -> None:
    import torch

    from methods.kv.cache import greedy, layers_of, make_cache, prefill
    from methods.xkv.xkv import compress

    ids = torch.tensor([[7, 3, 55, 21, 8, 8, 90, 14, 2, 33, 61, 5]])
    logits, cache = prefill(tiny, ids)
    ref = greedy(tiny, logits, make_cache(layers_of(cache)), 10)
    packed, _ = compress(tiny, layers_of(cache), group=2, rank=10_000)
    assert greedy(tiny, logits, make_cache(packed), 10) == ref


@pytest.mark.parametrize("group", [1, 2, 4])
def test_bytes_fall_as_ratio_predicts(tiny: Any, group: int) -> None:
    import torch

    from methods.kv.cache import kv_bytes, layers_of, prefill
    from methods.xkv.xkv import compress

    _, cache = prefill(tiny, torch.arange(1, 81).view(1, -1))
    layers = layers_of(cache)
    raw = kv_bytes(layers)
    kept = {}
    for ratio in (1, 2, 4, 8):
        _, kept[ratio] = compress(tiny, layers, group=group, ratio=ratio)
    assert kept[1] == raw  # ratio 1 keeps the raw cache
    for ratio in (2, 4, 8):
        assert kept[ratio] <= raw / ratio
    assert kept[8] < kept[4] < kept[2] < kept[1]


def test_a_bfloat16_cache_keeps_its_factors_in_bfloat16(tiny: Any) -> None:
    """Pre-RoPE keys are promoted to float32 by the rotary tables; the kept factors must
    still cost the cache's own bytes, or the achieved ratio falls short of the target."""
    import copy

    import torch

    from methods.kv.cache import kv_bytes, layers_of, prefill
    from methods.xkv.xkv import compress

    model = copy.deepcopy(tiny).to(torch.bfloat16)
    _, cache = prefill(model, torch.arange(1, 81).view(1, -1))
    layers = layers_of(cache)
    assert layers[0][0].dtype == torch.bfloat16
    raw = kv_bytes(layers)
    packed, kept_1 = compress(model, layers, group=2, ratio=1)
    assert kept_1 == raw and packed[0][0].dtype == torch.bfloat16
    for ratio in (2, 4, 8):
        _, kept = compress(model, layers, group=2, ratio=ratio)
        assert raw / ratio * 0.8 <= kept <= raw / ratio  # the target, not half of it


def test_lower_rank_errs_more(tiny: Any) -> None:
    import torch

    from methods.kv.cache import layers_of, prefill
    from methods.xkv.xkv import compress

    _, cache = prefill(tiny, torch.arange(1, 61).view(1, -1))
    layers = layers_of(cache)

    def error(rank: int) -> float:
        packed, _ = compress(tiny, layers, group=2, rank=rank)
        return sum(float((p[1] - v).norm()) for (_, v), p in zip(layers, packed, strict=True))

    assert error(2) > error(8) > error(24) > error(64) - 1e-3


@pytest.mark.slow
def test_method_reproduces_model_at_full_rank(lm: Any, chat: str) -> None:
    """Acceptance: with the raw cache and with a lossless SVD, greedy tokens are the model's."""
    from harness.plugins.whitebox_method import resolve_method

    ref = lm.generate_batch([chat], max_new_tokens=8)[0].tokens
    assert ref == lm.tokenizer(lm.generate(chat, max_new_tokens=8).text,
                               add_special_tokens=False).input_ids[: len(ref)]
    for options in ({"group": 1, "ratio": 1}, {"group": 5, "rank": 100_000}):
        out = lm.generate_batch([chat], max_new_tokens=8,
                                method=resolve_method("xkv", **options))[0]
        assert out.tokens == ref
        kv = out.data["metadata"]["kv"]
        assert kv["exact"] is True and kv["agreement"] == 1.0


@pytest.mark.slow
def test_method_reports_bytes_by_ratio(lm: Any, chat: str) -> None:
    from harness.plugins.whitebox_method import resolve_method

    kept = {}
    for ratio in (1, 2, 4):
        out = lm.generate_batch([chat], max_new_tokens=4, method=resolve_method(
            "xkv", group=5, ratio=ratio, reference=False))[0]
        kv = out.data["metadata"]["kv"]
        kept[ratio] = kv["kv_bytes"]
        assert kv["kv_bytes_full"] == kept.get(1, kv["kv_bytes_full"])
    assert kept[4] < kept[2] < kept[1]
    assert kept[2] <= kept[1] / 2 + 4 * 30 * 2 * 3 * 64 * 4  # prompt /2 + <= 4 raw tokens
