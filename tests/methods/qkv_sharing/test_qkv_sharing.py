"""The qkv-sharing recipe end to end: exact KV-cache reductions, a product rebuilt bit for bit
from its seed, and the product scored by the engine (bpb, induction, passkey; whitebox/ by
path and by recipe model args; one study cell through eval_set)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from harness.models.arch import kv_bytes_per_token  # noqa: E402
from harness.plugins.recipe import build_product, product_dir  # noqa: E402
from harness.results import read_training_log  # noqa: E402
from methods.qkv_sharing.qkv_sharing import ATTENTION, SHARING, kv_config  # noqa: E402
from methods.recipes import tinylm  # noqa: E402

TINY: dict[str, Any] = {"steps": 20, "d_model": 32, "n_layers": 1, "ffn": 64, "seq_len": 64,
                        "batch": 4, "warmup": 5, "corpus": "stdlib"}
REPO = Path(__file__).resolve().parents[3]


def test_kv_cache_reductions_are_the_issues_numbers_exactly() -> None:
    table = {(s, a): kv_bytes_per_token(kv_config({"sharing": s, "attention": a}))
             for s in SHARING for a in ATTENTION}
    base = table[("qkv", "mha")]
    assert base == 6 * 16 * 8 * 2 * 4 == 6144  # layers x KV heads x head dim x (K, V) x fp32
    saved = {key: 1 - value / base for key, value in table.items()}
    assert saved[("q-kv", "mha")] == 0.5
    assert saved[("q-kv", "gqa4")] == 0.875
    assert saved[("q-kv", "mqa")] == 0.96875  # the issue's 96.9%
    assert saved[("qkv", "gqa4")] == 0.75 and saved[("qkv", "mqa")] == 0.9375
    for attention in ATTENTION:  # Q=K saves nothing in the cache; Q=K=V saves what K=V does
        assert saved[("qk-v", attention)] == saved[("qkv", attention)]
        assert saved[("q=k=v", attention)] == saved[("q-kv", attention)]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("recipes")


@pytest.fixture(scope="module")
def product(cache: Path) -> Path:
    return build_product("qkv-sharing", {**TINY, "sharing": "q-kv", "attention": "gqa4"},
                         seed=1, cache_root=cache)


def _digest(folder: Path) -> str:
    return hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()


def test_product_rebuilds_bit_for_bit(product: Path, tmp_path: Path) -> None:
    again = build_product("qkv-sharing", {**TINY, "sharing": "q-kv", "attention": "gqa4"},
                          seed=1, cache_root=tmp_path)
    assert again.name == product.name and _digest(again) == _digest(product)
    a, b = read_training_log(product), read_training_log(again)
    assert a["loss"].to_list() == b["loss"].to_list() and a.height == 20
    other = build_product("qkv-sharing", {**TINY, "sharing": "q-kv", "attention": "gqa4"},
                          seed=2, cache_root=tmp_path)
    assert _digest(other) != _digest(product)
    cfg = tinylm.TinyConfig(d_model=32, n_layers=1, n_heads=16, n_kv_heads=4, ffn=64,
                            sharing="q-kv", seq_len=64, batch=4, steps=20)
    assert a["flops_total"][-1] == 20 * tinylm.step_flops(cfg)
    assert a["tokens_total"][-1] == 20 * 4 * 64


def test_product_config_gives_the_architecture_kv_bytes(product: Path) -> None:
    import json

    config = json.loads((product / "config.json").read_text())
    expected = kv_bytes_per_token(kv_config({**TINY, "sharing": "q-kv", "attention": "gqa4"}))
    assert kv_bytes_per_token(config) == expected == 1 * 4 * 2 * 1 * 4


def _metrics(log: Any) -> dict[str, float]:
    """``<score key or scorer>/<metric>`` -> value (a dict score's keys name its entries)."""
    return {f"{s.name}/{m}": v.value for s in log.results.scores for m, v in s.metrics.items()}


def test_engine_scores_the_product(product: Path) -> None:
    from inspect_ai import eval as inspect_eval

    from benchmarks.probes.bpb import bpb
    from benchmarks.probes.induction import induction
    from benchmarks.probes.passkey import passkey

    logs = inspect_eval([bpb(n=4, corpus="stdlib"), induction(n=2),
                         passkey(n=1, n_filler=2)],
                        model="whitebox/tinylm", model_args={"model_path": str(product)},
                        display="none", log_dir=str(product.parent / "logs"))
    assert [log.status for log in logs] == ["success"] * 3
    scores = _metrics(logs[0])
    assert scores["kv_bytes_per_token/mean"] == 32.0
    assert scores["tokens_per_byte/mean"] == 1.0  # byte-level: one token per byte
    assert 1.0 < scores["bpb/mean"] < 9.0
    assert "accuracy/mean" in _metrics(logs[1])
    assert "passkey_match/accuracy" in _metrics(logs[2])


def test_whitebox_builds_the_product_from_recipe_args(
        product: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from inspect_ai.model import get_model

    monkeypatch.setenv("EVALSUITE_CACHE", str(cache.parent / "env-cache"))
    args = {"recipe": "qkv-sharing", "recipe.seed": 1, "recipe.sharing": "q-kv",
            "recipe.attention": "gqa4", **{f"recipe.{k}": v for k, v in TINY.items()}}
    model = get_model("whitebox/tinylm", **args)
    folder = product_dir("qkv-sharing", {**TINY, "sharing": "q-kv", "attention": "gqa4"}, 1)
    assert folder.parent.parent == cache.parent / "env-cache" / "recipes"
    assert folder.name == product.name and _digest(folder) == _digest(product)
    assert model.api.lm.model.config.qkv_sharing == "q-kv"  # type: ignore[attr-defined]


def test_one_study_cell_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import benchmarks.probes.bpb  # noqa: F401  (registers harness/bpb without the plugin)
    from harness.factorial.inspect_stack import eval_cells
    from harness.factorial.study import load_study
    from harness.results import read_results

    monkeypatch.setenv("EVALSUITE_CACHE", str(tmp_path / "cache"))
    text = (REPO / "methods/studies/qkv_sharing/study.yaml").read_text()
    study_file = tmp_path / "study.yaml"
    tiny = ", ".join(f"recipe.{k}: {v}" for k, v in TINY.items())
    shrunk = (text.replace("{recipe: qkv-sharing, batch_size: 8}",
                           f"{{recipe: qkv-sharing, batch_size: 8, {tiny}}}")
              .replace("args: {n: 64, window_bytes: 256}", "args: {n: 4, window_bytes: 256}"))
    assert shrunk.count("recipe.d_model: 32") == 1 and "n: 4," in shrunk  # both edits landed
    study_file.write_text(shrunk)
    study = load_study(study_file)
    assert len(study.cells()) == 48  # 4 sharing x 3 attention x 2 seeds x 2 tasks
    cell = next(c for c in study.cells() if c.task == "harness/bpb" and c.levels["seed"] == "0"
                and c.levels["sharing"] == "q=k=v" and c.levels["attention"] == "mqa")
    assert eval_cells(str(study_file), [cell.id], str(tmp_path / "logs"), 1, {"display": "none"})
    frame = read_results(tmp_path / "logs")
    kv = frame.filter(frame["score_key"] == "bpb/kv_bytes_per_token")["score_value"]
    assert kv.to_list() == [1 * 1 * 2 * 1 * 4.0] * 4  # 1 layer, MQA, head dim 2, K=V, fp32
    assert set(frame["task"]) == {"bpb"} or set(frame["task"]) == {"harness/bpb"}


def test_copy_data_trains_on_the_fixed_length_copy_stream(cache: Path) -> None:
    from harness.plugins.recipe import RecipeError, resolve_options
    from harness.results import read_product
    from methods.qkv_sharing.qkv_sharing import COPY_LENGTH

    with pytest.raises(RecipeError, match="data"):
        resolve_options("qkv-sharing", {"data": "dyck"})
    copy = build_product("qkv-sharing", {**TINY, "data": "copy"}, seed=1, cache_root=cache)
    corpus = build_product("qkv-sharing", TINY, seed=1, cache_root=cache)
    assert read_product(copy)["options"]["data"] == "copy" and copy.name != corpus.name
    assert _digest(copy) != _digest(corpus)  # same seed and init, other data
    # the copy stream is ~5 bits per letter of entropy at most: a 20-step model on it ends
    # far below the first step's loss (the uniform 259-way guess, ln 259 = 5.56 nats)
    losses = read_training_log(copy).get_column("loss").to_list()
    assert losses[0] > 5.0 and losses[-1] < 4.5
    assert COPY_LENGTH == 24  # the induction probe's default string length
