"""xKV Selective Reconstruction: with every chunk selected it is full reconstruction (same
logits, same greedy tokens); with fewer it attends to fewer tokens and changes the output;
attention-scored selection follows the query, recency picks the latest chunks."""

from __future__ import annotations

import importlib.util
from types import SimpleNamespace
from typing import Any

import pytest

HAVE_TORCH = all(importlib.util.find_spec(m) for m in ("torch", "transformers"))
pytestmark = pytest.mark.skipif(not HAVE_TORCH, reason="needs torch + transformers")

IDS = [[(7 * i + 3) % 90 + 2 for i in range(40)]]
CHUNK, LOCAL = 4, 8  # 40 tokens: 8 chunks of 4 factored, the last 8 raw


def _packed(tiny: Any, rank: int = 4) -> tuple[Any, list[Any], Any]:
    import torch

    from methods.kv.cache import layers_of, prefill
    from methods.xkv.xkv import XKV

    logits, cache = prefill(tiny, torch.tensor(IDS))
    method = XKV(group=2, rank=rank, select=CHUNK, chunk=CHUNK, local=LOCAL)
    packed, kept, row_plan = method._pack(SimpleNamespace(model=tiny), layers_of(cache))
    assert row_plan is not None and row_plan.chunks == 8 and kept > 0
    return logits, packed, row_plan


def _forced_logits(tiny: Any, first: Any, packed: list[Any], tokens: list[int]) -> Any:
    import torch

    from methods.kv.cache import make_cache, step

    out = step(tiny, torch.tensor([tokens]), make_cache(packed)).logits[0]
    return torch.cat([first.view(1, -1), out[:-1]])


def test_all_chunks_selected_is_full_reconstruction(tiny: Any) -> None:
    import torch

    from methods.kv.cache import greedy, make_cache
    from methods.xkv import sr

    logits, packed, row_plan = _packed(tiny)
    full_tokens = greedy(tiny, logits, make_cache(packed), 8)
    full_logits = _forced_logits(tiny, logits, packed, full_tokens)
    plan = sr.SRPlan({0: row_plan}, n_select=row_plan.chunks)
    with sr.selective(tiny, plan):
        sr_tokens = greedy(tiny, logits, make_cache(packed), 8)
        sr_logits = _forced_logits(tiny, logits, packed, full_tokens)
    assert sr_tokens == full_tokens
    assert torch.equal(sr_logits, full_logits)  # nothing dropped: the unmodified sdpa call
    assert plan.rebuilt_fraction(0) == 1.0


@pytest.mark.parametrize("policy", ["attention", "recency"])
def test_fewer_chunks_attend_less_and_change_the_output(tiny: Any, policy: str) -> None:
    from methods.kv.cache import greedy, make_cache
    from methods.xkv import sr

    logits, packed, row_plan = _packed(tiny)
    full_tokens = greedy(tiny, logits, make_cache(packed), 8)
    full_logits = _forced_logits(tiny, logits, packed, full_tokens)
    plan = sr.SRPlan({0: row_plan}, n_select=2, policy=policy)
    with sr.selective(tiny, plan):
        sr_logits = _forced_logits(tiny, logits, packed, full_tokens)
    assert float((sr_logits[1:] - full_logits[1:]).abs().max()) > 1e-3
    assert plan.rebuilt_fraction(0) == pytest.approx(2 / 8)
    chosen = plan.selected[0]
    assert len(chosen) == tiny.config.num_hidden_layers
    assert all(ids.shape[-1] == 2 for ids in chosen)
    if policy == "recency":
        assert all(sorted(ids[0, 0].tolist()) == [6, 7] for ids in chosen)


def test_keep_mask_counts_and_local_window(tiny: Any) -> None:
    import torch

    from methods.xkv import sr

    _, _, row_plan = _packed(tiny)
    plan = sr.SRPlan({0: sr.RowPlan(3, row_plan.chunk, row_plan.landmarks)}, n_select=3)
    heads = tiny.config.num_attention_heads
    query = torch.randn(1, heads, 2, tiny.config.hidden_size // heads)
    keep = sr.keep_mask(plan, 0, query, 3 + 40 + 5, 0.25)
    assert keep is not None and keep.shape == (1, heads, 2, 48)
    body = keep[0, :, :, 3 : 3 + 32]
    assert torch.all(body.sum(-1) == 3 * CHUNK)  # 3 chunks of 4 rebuilt per head and query
    assert torch.all(keep[0, :, :, :3]) and torch.all(keep[0, :, :, 35:])  # pad/local/decoded


def test_attention_selection_follows_the_query() -> None:
    import torch

    from methods.xkv import sr

    marks = torch.zeros(1, 5, 4)
    marks[0, 3] = torch.tensor([5.0, 0, 0, 0])
    marks[0, 1] = torch.tensor([0, 5.0, 0, 0])
    query = torch.tensor([[[1.0, 0, 0, 0]], [[0, 1.0, 0, 0]]])  # 2 query heads, 1 kv head
    ids = sr.select_chunks(query, marks, 2, "attention", 1.0)
    assert sorted(ids[0, 0].tolist()) == [1, 3]
    assert sr.select_chunks(query, marks, 2, "recency", 1.0)[0, 0].tolist() == [3, 4]


def test_uninstall_restores_attention(tiny: Any) -> None:
    from methods.xkv import sr

    _, _, row_plan = _packed(tiny)
    before = tiny.config._attn_implementation
    with pytest.raises(RuntimeError), sr.selective(tiny, sr.SRPlan({0: row_plan}, 1)):
        assert tiny.config._attn_implementation == sr.NAME
        raise RuntimeError("boom")
    assert tiny.config._attn_implementation == before
    assert id(tiny.config) not in sr._PLANS


def test_bad_options_are_rejected() -> None:
    from methods.xkv import sr
    from methods.xkv.xkv import XKV

    with pytest.raises(ValueError, match="policy"):
        sr.SRPlan({}, 1, policy="random")
    with pytest.raises(ValueError, match="policy"):
        XKV(select=8, policy="random")
    with pytest.raises(ValueError):
        XKV(select=8, chunk=0)


@pytest.mark.slow
def test_method_reports_the_rebuilt_share(lm: Any, chat: str) -> None:
    from harness.plugins.whitebox_method import resolve_method

    every = resolve_method("xkv", group=5, ratio=4, select=100_000, chunk=8, local=8)
    some = resolve_method("xkv", group=5, ratio=4, select=8, chunk=8, local=8)
    full = lm.generate_batch([chat], max_new_tokens=6, method=every)[0].data["metadata"]["kv"]
    part = lm.generate_batch([chat], max_new_tokens=6, method=some)[0].data["metadata"]["kv"]
    assert full["sr_rebuilt_fraction"] == 1.0
    assert 0 < part["sr_rebuilt_fraction"] < 0.5 and 0 <= part["agreement"] <= 1
    assert full["kv_bytes"] == part["kv_bytes"]  # same factors, landmarks and window
