"""ArborKV: per-node KV tree search; a one-branch tree is greedy decoding, eviction saves
memory as the budget predicts, and lazy re-prefill restores exactly the evicted tokens."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

HAVE_TORCH = all(importlib.util.find_spec(m) for m in ("torch", "transformers"))
pytestmark = pytest.mark.skipif(not HAVE_TORCH, reason="needs torch + transformers")

IDS = [[11, 4, 37, 52, 8, 19, 63, 2, 30, 71, 5, 44]]


def _prompt(tiny: Any) -> tuple[Any, Any]:
    import torch

    from methods.kv.cache import layers_of, prefill

    logits, cache = prefill(tiny, torch.tensor(IDS))
    return logits, layers_of(cache)


def test_one_branch_tree_is_greedy(tiny: Any) -> None:
    from methods.kv.arbor import search_tokens
    from methods.kv.cache import greedy, make_cache

    logits, layers = _prompt(tiny)
    ref = greedy(tiny, logits, make_cache(layers), 14)
    tokens, stats = search_tokens(tiny, set(), layers, logits, branch=1, segment=3,
                                  expansions=10, max_tokens=14)
    assert tokens == ref
    assert stats.reprefill_tokens == 0 and stats.evicted_tokens == 0


@pytest.mark.parametrize("budget", [0, 3, 6])
def test_budget_bounds_inactive_memory(tiny: Any, budget: int) -> None:
    from methods.kv.arbor import TreeSearch

    logits, layers = _prompt(tiny)
    search = TreeSearch(tiny, set(), branch=3, segment=3, expansions=5, budget=budget,
                        max_tokens=12)
    leaf = search.run(layers, logits)
    unbounded = TreeSearch(tiny, set(), branch=3, segment=3, expansions=5, max_tokens=12)
    unbounded.run(layers, logits)
    stats = search.stats
    assert stats.peak_tree_tokens < unbounded.stats.peak_tree_tokens
    # at the peak: the active path, its fresh children and at most `budget` other tokens
    longest_path = len(leaf.answer()) + 3 * 3
    assert stats.peak_tree_tokens <= longest_path + budget + 3 * 3
    assert stats.evicted_tokens > 0


def test_peak_memory_falls_with_budget(tiny: Any) -> None:
    from methods.kv.arbor import TreeSearch

    logits, layers = _prompt(tiny)
    peaks = []
    for budget in (None, 8, 2, 0):
        search = TreeSearch(tiny, set(), branch=3, segment=3, expansions=6, budget=budget,
                            max_tokens=12)
        search.run(layers, logits)
        peaks.append(search.stats.peak_tree_tokens)
    assert peaks == sorted(peaks, reverse=True) and peaks[-1] < peaks[0]


def test_reprefill_restores_evicted_kv(tiny: Any) -> None:
    import torch

    from methods.kv.arbor import TreeSearch

    logits, layers = _prompt(tiny)
    search = TreeSearch(tiny, set(), branch=2, segment=4, expansions=1, max_tokens=12)
    search.run(layers, logits)
    child = search.nodes[1]
    assert child.kv is not None
    original = [(k.clone(), v.clone()) for k, v in child.kv]
    child.kv = [(k[:, :, :1], v[:, :, :1]) for k, v in child.kv]  # evict all but one token
    search._path_cache(child)
    assert search.stats.reprefill_tokens == len(child.tokens) - 1
    for (k, v), (ok, ov) in zip(child.kv, original, strict=True):
        assert torch.allclose(k, ok, atol=1e-5) and torch.allclose(v, ov, atol=1e-5)


@pytest.mark.slow
def test_method_one_branch_reproduces_model(lm: Any, chat: str) -> None:
    from harness.models.hooks import resolve_method

    ref = lm.generate_batch([chat], max_new_tokens=8)[0].tokens
    method = resolve_method("arborkv", branch=1, segment=3, max_tokens=8, reference=False)
    out = lm.generate_batch([chat], max_new_tokens=8, method=method)[0]
    assert out.tokens == ref


@pytest.mark.slow
def test_method_without_eviction_matches_its_reference(lm: Any, chat: str) -> None:
    from harness.models.hooks import resolve_method

    method = resolve_method("arborkv", branch=2, segment=3, expansions=2, max_tokens=6)
    out = lm.generate_batch([chat], max_new_tokens=6, method=method)[0]
    kv = out.data["metadata"]["kv"]
    assert kv["exact"] is True and kv["evicted_tokens"] == 0
    assert kv["kv_bytes"] == kv["kv_bytes_full"]
