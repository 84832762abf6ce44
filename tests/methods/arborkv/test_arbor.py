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
    from methods.arborkv.arbor import search_tokens
    from methods.kv.cache import greedy, make_cache

    logits, layers = _prompt(tiny)
    ref = greedy(tiny, logits, make_cache(layers), 14)
    tokens, stats = search_tokens(tiny, set(), layers, logits, branch=1, segment=3,
                                  expansions=10, max_tokens=14)
    assert tokens == ref
    assert stats.reprefill_tokens == 0 and stats.evicted_tokens == 0


@pytest.mark.parametrize("budget", [0, 3, 6])
def test_budget_bounds_inactive_memory(tiny: Any, budget: int) -> None:
    from methods.arborkv.arbor import TreeSearch

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
    from methods.arborkv.arbor import TreeSearch

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

    from methods.arborkv.arbor import TreeSearch

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
    from harness.plugins.whitebox_method import resolve_method

    ref = lm.generate_batch([chat], max_new_tokens=8)[0].tokens
    method = resolve_method("arborkv", branch=1, segment=3, max_tokens=8, reference=False)
    out = lm.generate_batch([chat], max_new_tokens=8, method=method)[0]
    assert out.tokens == ref


@pytest.mark.slow
def test_method_without_eviction_matches_its_reference(lm: Any, chat: str) -> None:
    from harness.plugins.whitebox_method import resolve_method

    method = resolve_method("arborkv", branch=2, segment=3, expansions=2, max_tokens=6)
    out = lm.generate_batch([chat], max_new_tokens=6, method=method)[0]
    kv = out.data["metadata"]["kv"]
    assert kv["exact"] is True and kv["evicted_tokens"] == 0
    assert kv["kv_bytes"] == kv["kv_bytes_full"]


def test_reprefill_restores_the_evicted_prefix_logits(tiny: Any) -> None:
    import torch

    from methods.arborkv.arbor import TreeSearch
    from methods.kv.cache import step

    logits, layers = _prompt(tiny)
    search = TreeSearch(tiny, set(), branch=2, segment=4, expansions=2, max_tokens=16)
    search.run(layers, logits)
    node = next(n for n in search.nodes if n.parent is not None and n.parent.parent is not None
                and n.next_logits is not None)
    assert node.next_logits is not None
    probe = torch.tensor([[int(torch.argmax(node.next_logits))]])
    before = step(tiny, probe, search._path_cache(node)).logits[0, -1]
    for n in node.path()[1:]:  # evict the whole generated prefix, keep the prompt
        n.kv = None
    restored = search._path_cache(node)
    assert search.stats.reprefills == len(node.path()) - 1
    assert search.stats.reprefill_tokens == len(node.answer())
    after = step(tiny, probe, restored).logits[0, -1]
    assert torch.allclose(after, before, atol=1e-5, rtol=1e-5)
    assert int(torch.argmax(after)) == int(torch.argmax(before))


def test_line_thoughts_end_at_segment_end_tokens(tiny: Any) -> None:
    from methods.arborkv.arbor import TreeSearch

    logits, layers = _prompt(tiny)
    ends = set(range(0, 96, 3))  # a third of the vocabulary ends a thought
    search = TreeSearch(tiny, set(), branch=2, segment=6, expansions=6, max_tokens=24,
                        segment_end=ends)
    search.run(layers, logits)
    thoughts = [n.tokens for n in search.nodes[1:]]
    assert any(len(t) < 6 for t in thoughts)
    for t in thoughts:  # a thought stops at its first end token (or the segment cap)
        assert all(tok not in ends for tok in t[:-1])


def test_budgeted_search_revisits_and_counts_reprefills(tiny: Any) -> None:
    from methods.arborkv.arbor import TreeSearch

    logits, layers = _prompt(tiny)
    seen = []
    for branch, segment in ((3, 2), (3, 3), (2, 2), (4, 2)):
        search = TreeSearch(tiny, set(), branch=branch, segment=segment, expansions=10,
                            budget=0, max_tokens=20)
        search.run(layers, logits)
        s = search.stats
        assert (s.reprefills > 0) == (s.reprefill_tokens > 0)
        assert (s.evictions > 0) == (s.evicted_tokens > 0)
        assert s.expansions > 3
        seen.append(s.reprefills)
    assert max(seen) > 0  # best-first went back to an evicted node at least once


def test_bfs_revisits_evicted_nodes_and_keeps_the_answer(tiny: Any) -> None:
    from methods.arborkv.arbor import TreeSearch, search_tokens

    logits, layers = _prompt(tiny)
    options = {"branch": 2, "segment": 3, "expansions": 7, "max_tokens": 15,
               "strategy": "bfs", "beam": 2}
    free, free_stats = search_tokens(tiny, set(), layers, logits, **options)
    tight, stats = search_tokens(tiny, set(), layers, logits, budget=0, **options)
    assert stats.reprefills > 0 and stats.evictions > 0
    assert stats.peak_tree_tokens < free_stats.peak_tree_tokens
    assert tight == free  # eviction is token-extractive: re-prefill restores the same search
    with pytest.raises(ValueError, match="strategy"):
        TreeSearch(tiny, set(), strategy="dfs")
