"""The progressive-depth recipe: what expansion keeps and changes per init, exact FLOPs at
each step's depth, a product rebuilt bit for bit from its seed and loadable by
``AutoModelForCausalLM``, the baseline equal to tinylm's own trainer, clear option errors,
and the compute-to-loss analysis on curves with known answers."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pl = pytest.importorskip("polars")

from harness.corpus import load_corpus  # noqa: E402
from harness.plugins.recipe import RecipeError, build_product  # noqa: E402
from harness.results import read_training_log  # noqa: E402
from methods.progressive_depth.progressive_depth import (  # noqa: E402
    compute_savings,
    compute_to_loss,
    expand_depth,
    smoothed_loss,
    transfer_optimizer,
    wsd_lr,
)
from methods.recipes import tinylm  # noqa: E402

TINY: dict[str, Any] = {"steps": 20, "d_model": 32, "n_layers": 3, "n_heads": 4, "ffn": 64,
                        "seq_len": 64, "batch": 4, "warmup": 4, "corpus": "stdlib"}
CFG = tinylm.TinyConfig(d_model=32, n_layers=3, n_heads=4, n_kv_heads=4, ffn=64, seq_len=64,
                        batch=4, steps=20, warmup=4)
X = torch.tensor([[tinylm.BOS, *b"def f(x):\n    return x"]])


def _shallow(start: int, seed: int = 0) -> tuple[Any, dict[str, Any]]:
    """A shallow model taken from the seeded full-depth init (as the recipe does), with its
    weights perturbed so it is not the init itself, and the full init's state dict."""
    from transformers import LlamaForCausalLM

    full = tinylm.build_model(CFG, seed)
    fresh = {k: v.detach().clone() for k, v in full.state_dict().items()}
    small = LlamaForCausalLM(tinylm.llama_config(replace(CFG, n_layers=start)))
    small.load_state_dict({k: fresh[k] for k in small.state_dict()}, strict=True)
    gen = torch.Generator().manual_seed(7)
    with torch.no_grad():
        for p in small.parameters():
            p.add_(0.05 * torch.randn(p.shape, generator=gen))
    return small, fresh


def _logits(model: Any) -> Any:
    model.eval()
    with torch.no_grad():
        return model(input_ids=X, use_cache=False).logits


@pytest.mark.parametrize("start", [0, 1, 2])
def test_zero_init_expansion_preserves_the_function_exactly(start: int) -> None:
    small, fresh = _shallow(start)
    deep = expand_depth(small, replace(CFG, n_layers=start), 3, "zero", fresh)
    assert len(deep.model.layers) == 3
    assert torch.equal(_logits(deep), _logits(small))  # new blocks add exactly 0
    for j in range(start, 3):  # the rest of each new block is the random init
        layer = deep.model.layers[j]
        assert not layer.self_attn.o_proj.weight.any() and not layer.mlp.down_proj.weight.any()
        assert torch.equal(layer.self_attn.q_proj.weight,
                           fresh[f"model.layers.{j}.self_attn.q_proj.weight"])


@pytest.mark.parametrize("start", [0, 1])
def test_random_init_keeps_trained_weights_and_changes_the_function(start: int) -> None:
    small, fresh = _shallow(start)
    deep = expand_depth(small, replace(CFG, n_layers=start), 3, "random", fresh)
    deep_state = deep.state_dict()
    for key, value in small.state_dict().items():  # embeddings, norm, trained layers
        assert torch.equal(deep_state[key], value)
    for key, value in fresh.items():  # new layers: the seeded full-depth init
        if any(key.startswith(f"model.layers.{j}.") for j in range(start, 3)):
            assert torch.equal(deep_state[key], value)
    assert not torch.allclose(_logits(deep), _logits(small))  # documented: function moves


def test_copy_init_repeats_the_trained_layers_and_needs_one() -> None:
    small, fresh = _shallow(2)
    deep = expand_depth(small, replace(CFG, n_layers=2), 5, "copy", fresh)
    state = deep.state_dict()
    for j in range(5):
        for key in [k for k in state if k.startswith(f"model.layers.{j % 2}.")]:
            assert torch.equal(state[key.replace(f"layers.{j % 2}.", f"layers.{j}.")],
                               small.state_dict()[key])
    zero_layer, fresh0 = _shallow(0)
    with pytest.raises(ValueError, match="copy needs at least one"):
        expand_depth(zero_layer, replace(CFG, n_layers=0), 3, "copy", fresh0)


def test_optimizer_state_moves_with_the_carried_parameters() -> None:
    small, fresh = _shallow(1)
    small_cfg = replace(CFG, n_layers=1)
    opt = tinylm.make_optimizer(small, small_cfg)
    loss = small(input_ids=X, use_cache=False).logits.square().mean()
    loss.backward()
    opt.step()
    deep = expand_depth(small, small_cfg, 3, "random", fresh)
    kept = transfer_optimizer(opt, small, deep, CFG, keep=True)
    old = dict(small.named_parameters())
    for name, param in deep.named_parameters():
        if name in old:
            assert torch.equal(kept.state[param]["exp_avg_sq"], opt.state[old[name]]["exp_avg_sq"])
        else:
            assert param not in kept.state
    reset = transfer_optimizer(opt, small, deep, CFG, keep=False)
    assert len(reset.state) == 0


def test_wsd_schedule() -> None:
    lr_at = wsd_lr(1.0, steps=100, warmup=10, decay=0.2)
    assert lr_at(5) == 0.5 and lr_at(10) == 1.0 and lr_at(80) == 1.0
    assert lr_at(90) == pytest.approx(0.55) and lr_at(100) == pytest.approx(0.1)
    assert wsd_lr(1.0, steps=10, warmup=0, decay=0.0)(10) == 1.0


@pytest.fixture(scope="module")
def products(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    cache = tmp_path_factory.mktemp("recipes")
    return {start: build_product("progressive-depth", {**TINY, "start_layers": start},
                                 seed=1, cache_root=cache) for start in (0, 1, 3)}


def test_flops_and_depth_per_step_match_the_depth_run(products: dict[int, Path]) -> None:
    for start, folder in products.items():
        log = read_training_log(folder)
        assert log["step"].to_list() == list(range(1, 21))
        last = 16 if start < 3 else 20  # expand_at 0.8 x 20 steps
        depths = [start] * last + [3] * (20 - last)
        assert log["depth"].to_list() == depths
        assert log["flops"].to_list() == [tinylm.step_flops(replace(CFG, n_layers=d))
                                          for d in depths]
        total = sum(log["flops"].to_list())
        assert log["flops_total"][-1] == total
        assert json.loads((folder / "product.json").read_text())["totals"]["flops"] == total
    full = tinylm.step_flops(CFG)
    assert tinylm.step_flops(replace(CFG, n_layers=0)) < full / 3  # the 0-layer phase is cheap


def _digest(folder: Path) -> str:
    return hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()


def test_same_seed_same_weights_bit_for_bit(products: dict[int, Path], tmp_path: Path) -> None:
    again = build_product("progressive-depth", {**TINY, "start_layers": 0}, seed=1,
                          cache_root=tmp_path)
    assert again.name == products[0].name and _digest(again) == _digest(products[0])
    assert (read_training_log(again)["loss"].to_list()
            == read_training_log(products[0])["loss"].to_list())
    other = build_product("progressive-depth", {**TINY, "start_layers": 0}, seed=2,
                          cache_root=tmp_path)
    assert _digest(other) != _digest(products[0])
    assert len({_digest(p) for p in products.values()}) == 3


def test_product_is_a_full_depth_llama_loadable_by_auto(products: dict[int, Path]) -> None:
    from transformers import AutoModelForCausalLM

    for folder in products.values():
        model = AutoModelForCausalLM.from_pretrained(str(folder))
        assert type(model).__name__ == "LlamaForCausalLM"
        assert model.config.num_hidden_layers == 3 and len(model.model.layers) == 3
        assert torch.isfinite(_logits(model)).all()


def test_full_depth_cosine_baseline_is_tinylms_own_trainer(tmp_path: Path) -> None:
    folder = build_product("progressive-depth",
                           {**TINY, "start_layers": 3, "schedule": "cosine"}, seed=3,
                           cache_root=tmp_path)
    from transformers import AutoModelForCausalLM

    ours = AutoModelForCausalLM.from_pretrained(str(folder))
    reference = tinylm.train(CFG, load_corpus("stdlib").train, seed=3)
    for (name, a), (_, b) in zip(ours.state_dict().items(), reference.state_dict().items(),
                                 strict=True):
        assert torch.equal(a, b), name


@pytest.mark.parametrize(("options", "message"), [
    ({"start_layers": 4}, "start_layers=4: must be between 0 and n_layers=3"),
    ({"start_layers": -1}, "start_layers=-1"),
    ({"expand_at": 1.0}, "expand_at=1.0: must be a fraction"),
    ({"expand_at": 0.01}, "leaves no step"),
    ({"init": "copy"}, "init=copy needs start_layers >= 1"),
    ({"init": "identity"}, "one of random, copy, zero"),
    ({"schedule": "linear"}, "one of wsd, cosine"),
    ({"decay": 1.0}, "decay fraction"),
    ({"n_layers": 0, "start_layers": 0}, "at least one layer"),
])
def test_bad_options_give_a_clear_error_and_no_product(options: dict[str, Any], message: str,
                                                       tmp_path: Path) -> None:
    with pytest.raises(RecipeError, match=message.replace("+", r"\+")):
        build_product("progressive-depth", {**TINY, **options}, seed=0, cache_root=tmp_path)
    assert not list(tmp_path.rglob("product.json"))


def _curve(seed: int, start: int, losses: list[float], flops: int) -> Any:
    n = len(losses)
    return pl.DataFrame({
        "step": list(range(1, n + 1)), "loss": losses, "flops": [flops] * n,
        "flops_total": [flops * (i + 1) for i in range(n)],
        "hash": [f"h{seed}{start}"] * n, "seed": [seed] * n,
        "opt_start_layers": [str(start)] * n})


def test_compute_to_loss_and_savings_on_known_curves() -> None:
    full = _curve(0, 6, [5.0, 4.0, 3.0, 2.0, 1.0], 10)
    fast = _curve(0, 0, [4.0, 3.0, 2.0, 1.0, 0.5], 2)   # reaches 1.0 at step 4
    slow = _curve(0, 1, [5.0, 5.0, 5.0, 4.0, 3.0], 3)   # never reaches 1.0
    frames = pl.concat([full, fast, slow])
    assert smoothed_loss(full, 2)["loss_smooth"].to_list() == [5.0, 4.5, 3.5, 2.5, 1.5]
    table = compute_to_loss(frames, 1.0, window=1).sort("start_layers")
    assert table["flops_to_target"].to_list() == [8, None, 50]
    assert table["step_to_target"].to_list() == [4, None, 5]
    savings = compute_savings(frames, full_layers=6, window=1)
    row = {r["start_layers"]: r for r in savings.iter_rows(named=True)}
    assert row[0]["ratio"] == pytest.approx(8 / 50) and row[6]["ratio"] == 1.0
    assert row[1]["ratio"] is None
    assert row[0]["budget_ratio"] == pytest.approx(10 / 50)
    # reverse view: the full run needed 50 FLOPs for loss <= 0.5? never -> null; the slow
    # run's final 3.0 the full run reached at step 3 (30 FLOPs) vs its own 15
    assert row[0]["full_flops_at_this_loss"] is None
    assert row[1]["full_flops_at_this_loss"] == 30 and row[1]["speedup"] == pytest.approx(2.0)
    with pytest.raises(ValueError, match="no full-depth run"):
        compute_savings(pl.concat([fast, slow]), full_layers=6, window=1)
