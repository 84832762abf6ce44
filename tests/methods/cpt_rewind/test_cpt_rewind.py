"""cpt / head-rewind on a tiny random Llama (2 layers, 4 query heads, 2 KV heads): exact
endpoints of the blend, exactly the rewound heads' slices restored, the importance ranking by
the stated criterion, the spectra measures on constructed updates, and a CPT product rebuilt
bit for bit from its seed (SmolLM2 itself is never trained here)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from harness.plugins.recipe import build_product  # noqa: E402
from harness.results import read_training_log  # noqa: E402
from methods.cpt_rewind import cpt_rewind as cr  # noqa: E402
from methods.recipes import tinylm  # noqa: E402

HEADS, KV, DIM = 4, 2, 8


def _config() -> Any:
    from transformers import LlamaConfig

    return LlamaConfig(vocab_size=tinylm.VOCAB, hidden_size=HEADS * DIM, intermediate_size=64,
                       num_hidden_layers=2, num_attention_heads=HEADS, num_key_value_heads=KV,
                       head_dim=DIM, max_position_embeddings=128, tie_word_embeddings=True,
                       bos_token_id=tinylm.BOS, eos_token_id=tinylm.EOS,
                       pad_token_id=tinylm.PAD)


def _model(seed: int) -> Any:
    from transformers import LlamaForCausalLM

    torch.manual_seed(seed)
    return LlamaForCausalLM(_config()).eval()


@pytest.fixture(scope="module")
def base_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tiny-base")
    _model(0).save_pretrained(str(out))
    tinylm.save_tokenizer(out, 128)
    return out


@pytest.fixture(scope="module")
def pair() -> tuple[dict[str, Any], dict[str, Any], Any]:
    """A base state and a 'tuned' one: the base plus a random update everywhere."""
    model = _model(0)
    base = {k: v.clone() for k, v in model.state_dict().items()}
    gen = torch.Generator().manual_seed(1)
    tuned = {k: v + 0.05 * torch.randn(v.shape, generator=gen) for k, v in base.items()}
    tuned["lm_head.weight"] = tuned["model.embed_tokens.weight"]  # tied
    return base, tuned, model.config


def test_alpha_one_no_rewind_is_the_cpt_and_alpha_zero_the_base(pair: Any) -> None:
    base, tuned, config = pair
    same = cr.blend_state(base, tuned, config, [], 1.0)
    assert all(torch.equal(same[k], tuned[k]) for k in base)
    zero = cr.blend_state(base, tuned, config, [], 0.0)
    assert all(torch.equal(zero[k], base[k]) for k in base)
    # alpha 0 with rewound heads is still the base; alpha 0.5 is strictly between
    heads = [("q", 0, 1), ("kv", 1, 0)]
    assert all(torch.equal(cr.blend_state(base, tuned, config, heads, 0.0)[k], base[k])
               for k in base)
    half = cr.blend_state(base, tuned, config, [], 0.5)["model.layers.0.mlp.up_proj.weight"]
    b, t = base["model.layers.0.mlp.up_proj.weight"], tuned["model.layers.0.mlp.up_proj.weight"]
    assert torch.allclose(half, (b + t) / 2, atol=1e-7) and not torch.equal(half, b)


def test_rewinding_a_head_restores_exactly_its_slices(pair: Any) -> None:
    base, tuned, config = pair
    out = cr.blend_state(base, tuned, config, [("q", 1, 2), ("kv", 0, 1)], 1.0)
    rows = slice(2 * DIM, 3 * DIM)
    pre1, pre0 = "model.layers.1.self_attn.", "model.layers.0.self_attn."
    q, o = out[pre1 + "q_proj.weight"], out[pre1 + "o_proj.weight"]
    assert torch.equal(q[rows], base[pre1 + "q_proj.weight"][rows])
    assert torch.equal(o[:, rows], base[pre1 + "o_proj.weight"][:, rows])
    keep = torch.ones(HEADS * DIM, dtype=torch.bool)
    keep[rows] = False
    assert torch.equal(q[keep], tuned[pre1 + "q_proj.weight"][keep])
    assert torch.equal(o[:, keep], tuned[pre1 + "o_proj.weight"][:, keep])
    kv_rows = slice(DIM, 2 * DIM)
    for name in ("k_proj.weight", "v_proj.weight"):
        assert torch.equal(out[pre0 + name][kv_rows], base[pre0 + name][kv_rows])
        assert torch.equal(out[pre0 + name][:DIM], tuned[pre0 + name][:DIM])
        assert torch.equal(out[pre1 + name], tuned[pre1 + name])  # layer 1 KV untouched
    for name in ("q_proj.weight", "o_proj.weight"):  # layer 0 query heads untouched
        assert torch.equal(out[pre0 + name], tuned[pre0 + name])
    assert torch.equal(out["model.layers.0.mlp.down_proj.weight"],
                       tuned["model.layers.0.mlp.down_proj.weight"])


def test_importance_ranks_by_the_relative_update_norm(pair: Any) -> None:
    base, _, config = pair
    tuned = {k: v.clone() for k, v in base.items()}
    pre = "model.layers.0.self_attn."
    scales = {0: 0.3, 1: 0.01, 2: 0.1, 3: 0.02}  # query heads of layer 0, relative updates
    for h, s in scales.items():
        rows = slice(h * DIM, (h + 1) * DIM)
        tuned[pre + "q_proj.weight"][rows] *= 1 + s
        tuned[pre + "o_proj.weight"][:, rows] *= 1 + s
    imp = cr.head_importance(base, tuned, config)
    assert imp.height == 2 * (HEADS + KV)
    q0 = imp.filter((imp["kind"] == "q") & (imp["layer"] == 0)).sort("head")
    assert q0["rel_update"].to_list() == pytest.approx(list(scales.values()), rel=1e-5)
    # 8 query heads (4 moved, 4 still), half rewound: the four unchanged ones and head 1...
    ranked = cr.rewind_mask(imp, 0.625)
    chosen = ranked.filter(ranked["rewound"] & (ranked["kind"] == "q"))
    assert sorted(zip(chosen["layer"], chosen["head"], strict=True)) == [
        (0, 1), (1, 0), (1, 1), (1, 2), (1, 3)]
    assert ranked.filter(ranked["rewound"] & (ranked["kind"] == "kv")).height == 2  # floor(2.5)
    assert cr.rewind_mask(imp, 0.0).filter("rewound").height == 0
    # a head with a big weight and a small relative update: first by rel-norm, not by norm
    big = {k: v.clone() for k, v in base.items()}
    pre1, rows = "model.layers.1.self_attn.", slice(0, DIM)
    big[pre1 + "q_proj.weight"][rows] *= 100
    big[pre1 + "o_proj.weight"][:, rows] *= 100
    moved = {k: v.clone() for k, v in tuned.items()}
    moved[pre1 + "q_proj.weight"][rows] = big[pre1 + "q_proj.weight"][rows] * 1.005
    moved[pre1 + "o_proj.weight"][:, rows] = big[pre1 + "o_proj.weight"][:, rows] * 1.005
    imp2 = cr.head_importance(big, moved, config)

    def picked(criterion: str) -> set[tuple[int, int]]:
        got = cr.rewind_mask(imp2, 0.5, criterion).filter("rewound")
        return {(r["layer"], r["head"]) for r in got.iter_rows(named=True) if r["kind"] == "q"}

    assert picked("rel-norm") == {(1, 0), (1, 1), (1, 2), (1, 3)}
    assert picked("norm") == {(0, 1), (1, 1), (1, 2), (1, 3)}
    # the random control: seeded, the same count, and another order for another seed
    one = cr.rewind_mask(imp2, 0.5, "random", seed=0)
    assert one.equals(cr.rewind_mask(imp2, 0.5, "random", seed=0))
    assert one.filter("rewound").height == 4 + 2  # 4 of 8 query heads, 2 of 4 KV heads
    orders = {tuple(cr.rewind_mask(imp2, 0.5, "random", seed=s)["rank"]) for s in range(5)}
    assert len(orders) > 1
    with pytest.raises(ValueError):
        cr.rewind_mask(imp, 1.5)


def test_spectra_separate_singular_values_from_vectors(tmp_path: Path) -> None:
    base = _model(0)
    base.save_pretrained(str(tmp_path / "base"))
    rotated = _model(0)
    scaled = _model(0)
    gen = torch.Generator().manual_seed(3)
    name = "model.layers.0.mlp.up_proj.weight"  # 64 x 32
    w = base.state_dict()[name]
    q, _ = torch.linalg.qr(torch.randn(64, 64, generator=gen, dtype=torch.float64))
    with torch.no_grad():
        rotated.state_dict()[name].copy_((q @ w.double()).float())  # same spectrum, new U
        scaled.state_dict()[name].mul_(1.5)  # spectrum x1.5, same vectors
    rotated.save_pretrained(str(tmp_path / "rot"))
    scaled.save_pretrained(str(tmp_path / "scaled"))
    rot = cr.spectra(tmp_path / "base", tmp_path / "rot", top_k=4)
    sca = cr.spectra(tmp_path / "base", tmp_path / "scaled", top_k=4)
    r, s = rot.filter(rot["name"] == name).row(0, named=True), sca.filter(
        sca["name"] == name).row(0, named=True)
    assert r["sv_rel_change"] < 1e-6 and r["update_rel"] > 0.5 and r["u_change"] > 0.3
    assert r["v_change"] < 1e-4  # a left rotation keeps the right singular vectors
    # a random update of the same norm does move the spectrum: the null is not invariant
    assert r["sv_rel_change_null"] > 0.1 and r["u_angle"] > 0.5
    assert s["sv_rel_change"] == pytest.approx(0.5, rel=1e-5) and s["u_change"] < 1e-5
    others = rot.filter(rot["name"] != name)
    assert float(others["update_rel"].max()) == 0.0 and float(others["u_change"].max()) < 1e-6
    summary = cr.spectra_summary(rot, cr.head_importance(
        base.state_dict(), rotated.state_dict(), base.config))
    assert summary["matrices"] == rot.height and summary["heads"]["q"]["count"] == 2 * HEADS


def _digest(folder: Path) -> str:
    return hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()


TINY_CPT: dict[str, Any] = {"steps": 3, "warmup": 1, "seq_len": 32, "batch": 2, "lr": 1e-3}


@pytest.mark.slow
def test_cpt_same_seed_same_weights_and_rewind_endpoints(base_dir: Path, tmp_path: Path) -> None:
    opts = {**TINY_CPT, "base": str(base_dir)}
    first = build_product("cpt", opts, seed=0, cache_root=tmp_path / "a")
    again = build_product("cpt", opts, seed=0, cache_root=tmp_path / "b")
    other = build_product("cpt", opts, seed=1, cache_root=tmp_path / "b")
    assert _digest(first) == _digest(again) != _digest(other) != _digest(base_dir)
    log = read_training_log(first)
    assert log.height == 3 and log["tokens"].to_list() == [64] * 3
    n = sum(p.numel() for p in _model(0).parameters())
    assert log["flops"].to_list() == [6 * n * 64] * 3
    assert (first / "tokenizer.json").is_file()

    cache = tmp_path / "a"
    full = build_product("head-rewind", opts, seed=0, cache_root=cache)
    assert _digest(full) != _digest(base_dir)
    cpt_state = cr._load(first).state_dict()
    full_state = cr._load(full).state_dict()
    assert all(torch.equal(full_state[k], cpt_state[k]) for k in cpt_state)
    zero = build_product("head-rewind", {**opts, "alpha": 0.0}, seed=0, cache_root=cache)
    base_state = cr._load(base_dir).state_dict()
    zero_state = cr._load(zero).state_dict()
    assert all(torch.equal(zero_state[k], base_state[k]) for k in base_state)
    half = build_product("head-rewind", {**opts, "rewind": 0.5}, seed=0, cache_root=cache)
    info = json.loads((half / "rewind.json").read_text())
    assert info["heads_rewound"] == {"q": 4, "kv": 2}
    assert info["cpt_hash"] == json.loads((first / "product.json").read_text())["hash"]
    assert 0.0 < info["head_update_energy_kept"] < 1.0
    # the least-important heads are the rewound ones, and exactly their slices are the base's
    half_state = cr._load(half).state_dict()
    rewound = [(h["kind"], h["layer"], h["head"]) for h in info["heads"] if h["rewound"]]
    expect = cr.blend_state(base_state, cpt_state, _config(), rewound, 1.0)
    assert all(torch.equal(half_state[k], expect[k]) for k in expect)
    rel = {(h["kind"], h["layer"], h["head"]): h["rel_update"] for h in info["heads"]}
    for kind in ("q", "kv"):
        out = [v for k, v in rel.items() if k[0] == kind and k not in rewound]
        assert max(v for k, v in rel.items() if k[0] == kind and k in rewound) <= min(out)


def test_paired_table_pairs_windows_within_a_probe() -> None:
    import polars as pl

    rows = []
    for probe, shift in (("stdlib", 0.0), ("pydoc", 5.0)):
        for i in range(8):
            rows.append({"probe": probe, "variant": "cpt", "sample_id": f"w{i}",
                         "bpb": shift + i})
            rows.append({"probe": probe, "variant": "base", "sample_id": f"w{i}",
                         "bpb": shift + i + 0.5 + 0.01 * (i % 2)})
    table = cr.paired_table(pl.DataFrame(rows))
    base = table.filter((pl.col("probe") == "pydoc") & (pl.col("variant") == "base")).row(
        0, named=True)
    # the windows differ by up to 7 bpb, but the paired difference is 0.5 +- 0.005
    assert base["d_cpt"] == pytest.approx(0.505) and base["d_cpt_hi"] - base["d_cpt_lo"] < 0.02
    assert base["lo"] < base["bpb"] - 1 and base["pct_cpt"] == pytest.approx(100 * 0.505 / 8.5)
    cpt = table.filter((pl.col("probe") == "stdlib") & (pl.col("variant") == "cpt")).row(
        0, named=True)
    assert cpt["d_cpt"] == 0.0 and cpt["d_base"] == pytest.approx(-0.505)


def test_recipes_accept_every_shipped_corpus() -> None:
    from harness.corpus import CORPORA
    from harness.plugins.recipe import RecipeError, resolve_options

    for name in ("cpt", "head-rewind"):
        assert resolve_options(name)["corpus"] == "stdlib"  # the CPT domain is unchanged
        for corpus in CORPORA:
            assert resolve_options(name, {"corpus": corpus})["corpus"] == corpus
        with pytest.raises(RecipeError):
            resolve_options(name, {"corpus": "wikipedia"})
