"""The bbo-merge recipe: the DEV split is disjoint from the engine's held-out windows and
from every checkpoint's training text; merging with c = 0 is the base and with c = e_t is
fine-tune t, bit for bit; a searched merge spends its budget, logs every evaluation, keeps
its best point and is rebuilt bit for bit from its seed."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

import methods.bbo_merge.bbo_merge  # noqa: E402, F401  (registers the recipes)
from harness.corpus import held_out_windows, load_corpus  # noqa: E402
from harness.plugins.recipe import build_product  # noqa: E402
from harness.results import read_training_log  # noqa: E402
from methods.bbo_merge.bbo_merge import (  # noqa: E402
    TASKS,
    base_options,
    checkpoint_files,
    dev_files,
    dev_windows,
    group_of,
    held_out_overlap,
    parse_coeffs,
)

TINY: dict[str, Any] = {"base_steps": 8, "ft_steps": 4, "warmup": 2, "ft_warmup": 1,
                        "d_model": 32, "n_layers": 2, "n_heads": 4, "ffn": 64, "seq_len": 64,
                        "batch": 2}
MERGE: dict[str, Any] = {**TINY, "dev_windows": 2, "window_bytes": 64, "groups": 2}


def test_dev_split_is_disjoint_from_held_out_and_from_training() -> None:
    corpus = load_corpus("stdlib+pydoc")
    dev = {f.path for f in dev_files(corpus)}
    assert dev and {f.source for f in dev_files(corpus)} == {"stdlib", "pydoc"}
    assert dev.isdisjoint(f.path for f in corpus.files if f.held_out)
    for part in ("base", *TASKS):
        assert dev.isdisjoint(f.path for f in checkpoint_files(corpus, part))
    assert {f.source for f in checkpoint_files(corpus, "stdlib")} == {"stdlib"}
    assert {f.source for f in checkpoint_files(corpus, "pydoc")} == {"pydoc"}
    windows = dev_windows(corpus, 256, 16)
    assert len(set(windows)) == 16
    held = held_out_windows(corpus, 256, 64)
    assert set(windows).isdisjoint(held)
    assert held_out_overlap(corpus, 256, 16) == 0
    assert not any(w in corpus.held_out for w in windows)


def test_groups_and_coefficients() -> None:
    assert group_of("model.embed_tokens.weight", 6, 3) == 0
    assert [group_of(f"model.layers.{i}.mlp.up_proj.weight", 6, 3) for i in range(6)] == [
        0, 0, 1, 1, 2, 2]
    assert group_of("model.norm.weight", 6, 3) == 2
    assert parse_coeffs("1,0", 2, 3) == [1, 1, 1, 0, 0, 0]
    assert parse_coeffs("1,2,3,4", 2, 2) == [1, 2, 3, 4]
    with pytest.raises(ValueError):
        parse_coeffs("1,2,3", 2, 2)


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("recipes")


def _weights(folder: Path) -> dict[str, Any]:
    from safetensors.torch import load_file

    return load_file(str(folder / "model.safetensors"))


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    import torch

    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_fixed_coefficients_give_the_constituents_exactly(cache: Path) -> None:
    base = build_product("merge-ckpt", base_options(TINY), 0,
                         cache_root=cache)
    fts = [build_product("merge-ckpt", {**TINY, "part": t}, 0, cache_root=cache)
           for t in TASKS]
    assert not _same(_weights(fts[0]), _weights(base))
    assert not _same(_weights(fts[0]), _weights(fts[1]))
    zero = build_product("bbo-merge", {**MERGE, "optimiser": "fixed", "coeffs": "0,0"}, 0,
                         cache_root=cache)
    assert _same(_weights(zero), _weights(base))
    for i, ft in enumerate(fts):
        coeffs = ",".join("1" if j == i else "0" for j in range(len(TASKS)))
        merged = build_product("bbo-merge", {**MERGE, "optimiser": "fixed", "coeffs": coeffs},
                               0, cache_root=cache)
        assert _same(_weights(merged), _weights(ft))
    half = build_product("bbo-merge", {**MERGE, "optimiser": "uniform"}, 0, cache_root=cache)
    w_half, w0, w1 = _weights(half), _weights(fts[0]), _weights(fts[1])
    for key in w_half:
        assert (w_half[key] - (w0[key] + w1[key]) / 2).abs().max() < 1e-6


def test_searched_merge_spends_its_budget_and_rebuilds_bit_for_bit(cache: Path,
                                                                 tmp_path: Path) -> None:
    options = {**MERGE, "optimiser": "cbo-ovi", "budget": 6, "popsize": 4}
    product = build_product("bbo-merge", options, 3, cache_root=cache)
    log = read_training_log(product)
    assert log.height == 6 and log["step"].to_list() == list(range(1, 7))
    info = json.loads((product / "merge.json").read_text())
    assert info["evaluations"] == 6 and len(info["coeffs"]) == len(TASKS) * 2
    assert info["dev_bpb"] == pytest.approx(min(log["loss"].to_list()), abs=1e-9)
    assert info["dev_bpb"] == min(log["best"].to_list())
    again = build_product("bbo-merge", options, 3, cache_root=tmp_path)
    digest = [hashlib.sha256((d / "model.safetensors").read_bytes()).hexdigest()
              for d in (product, again)]
    assert again.name == product.name and digest[0] == digest[1]
    other = build_product("bbo-merge", options, 4, cache_root=cache)
    assert json.loads((other / "merge.json").read_text())["coeffs"] != info["coeffs"]
