"""ArborKV's eviction cost (issue 49 item 2): the search counts its forwards, positions and
attended keys as a model hook sees them, the re-prefills are exactly the extra work of a
budgeted search over the unevicted one, the FLOP estimate agrees with PyTorch's own FLOP
counter, and the time of the re-prefills is measured where there were re-prefills only."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

HAVE_TORCH = all(importlib.util.find_spec(m) for m in ("torch", "transformers"))
pytestmark = pytest.mark.skipif(not HAVE_TORCH, reason="needs torch + transformers")

IDS = [[11, 4, 37, 52, 8, 19, 63, 2, 30, 71, 5, 44]]
OPTIONS = {"branch": 2, "segment": 3, "expansions": 7, "max_tokens": 15, "strategy": "bfs",
           "beam": 2}


def _prompt(tiny: Any) -> tuple[Any, Any]:
    import torch

    from methods.kv.cache import layers_of, prefill

    logits, cache = prefill(tiny, torch.tensor(IDS))
    return logits, layers_of(cache)


def test_attended_keys_counts_a_causal_mask() -> None:
    import torch

    from methods.arborkv.arbor import attended_keys

    for new, cached in ((1, 0), (1, 9), (4, 0), (5, 12)):
        # new queries over cached + new keys, each query sees the cache and itself backwards
        mask = torch.ones(new, cached + new).tril(cached)
        assert attended_keys(new, cached) == int(mask.sum())


def test_counts_match_what_the_model_sees(tiny: Any) -> None:
    from methods.arborkv.arbor import TreeSearch
    from methods.kv.cache import cache_arg

    seen: list[tuple[int, int]] = []  # (new tokens, cached tokens) per forward

    def hook(module: Any, args: Any, kwargs: dict[str, Any]) -> None:
        cache: Any = kwargs.get(cache_arg(module))
        seen.append((int(kwargs["input_ids"].shape[1]), int(cache.get_seq_length())))

    logits, layers = _prompt(tiny)
    handle = tiny.register_forward_pre_hook(hook, with_kwargs=True)
    try:
        search = TreeSearch(tiny, set(), budget=0, **OPTIONS)  # type: ignore[arg-type]
        search.run(layers, logits)
    finally:
        handle.remove()
    s = search.stats
    assert s.reprefills > 0
    assert s.forward_passes == len(seen)
    assert s.forward_tokens == sum(n for n, _ in seen)
    assert s.attended_keys == sum(n * c + n * (n + 1) // 2 for n, c in seen)
    multi = [n for n, _ in seen if n > 1]  # generation feeds one token; re-prefill several
    assert sum(multi) <= s.reprefill_tokens


def test_reprefills_are_the_extra_work_of_eviction(tiny: Any) -> None:
    from methods.arborkv.arbor import cost_metadata, parameter_count, search_tokens

    logits, layers = _prompt(tiny)
    free, free_stats = search_tokens(tiny, set(), layers, logits, **OPTIONS)
    tight, stats = search_tokens(tiny, set(), layers, logits, budget=0, **OPTIONS)
    assert tight == free and stats.reprefill_tokens > 0
    # the same search (same tokens, same contexts) plus the re-prefills, nothing else
    assert stats.forward_tokens - free_stats.forward_tokens == stats.reprefill_tokens
    assert stats.forward_passes - free_stats.forward_passes == stats.reprefills
    assert stats.attended_keys - free_stats.attended_keys == stats.reprefill_attended_keys
    params = parameter_count(tiny)
    mine = cost_metadata(stats, tiny.config, params)
    ref = cost_metadata(free_stats, tiny.config, params)
    assert mine["search_flops"] - ref["search_flops"] == mine["reprefill_flops"] > 0
    assert free_stats.reprefill_tokens == 0 and ref["reprefill_flops"] == 0
    # timed: the re-prefills take time only where there were re-prefills
    assert free_stats.reprefill_seconds == 0.0 and free_stats.reprefill_cpu_seconds == 0.0
    assert 0.0 < stats.reprefill_seconds <= stats.search_seconds
    assert 0.0 < stats.reprefill_cpu_seconds <= stats.search_cpu_seconds


def test_flop_estimate_matches_torch_flop_counter(tiny: Any) -> None:
    """Eager attention, so the counter sees the attention matmuls too; it computes the full
    [new, cached + new] score block and masks it, where the estimate counts the causal
    pairs only: they differ by exactly the masked corner (none for one new token)."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from methods.arborkv.arbor import attended_keys, parameter_count, search_flops
    from methods.kv.cache import make_cache, step

    _, layers = _prompt(tiny)
    config = tiny.config
    params = parameter_count(tiny)
    embedding = int(tiny.get_input_embeddings().weight.numel())  # a lookup, not a matmul
    per_pair = 4 * config.num_hidden_layers * config.num_attention_heads * (
        config.hidden_size // config.num_attention_heads)
    before = config._attn_implementation
    config._attn_implementation = "eager"
    try:
        for new in (1, 6):
            cache = make_cache(layers)
            cached = int(cache.get_seq_length())
            with FlopCounterMode(display=False) as counter:
                step(tiny, torch.arange(new).view(1, -1) + 3, cache)
            counted = counter.get_total_flops()
            keys = attended_keys(new, cached)
            estimate = search_flops(config, params - embedding, new, keys)
            masked = per_pair * (new * (cached + new) - keys)
            # what is left: the norms' weights (elementwise, not matmuls), < 1%
            assert abs(estimate + masked - counted) / counted < 0.01, (new, estimate, counted)
    finally:
        config._attn_implementation = before
