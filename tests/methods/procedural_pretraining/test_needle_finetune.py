"""The needle fine-tune of a procedural-pretraining product: its items are held out from the
items the study and the pilot score, it is deterministic by seed, it starts from the cached
pretrained product of the same options, it trains on the key digits only, and it learns."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

import torch  # noqa: E402

from environments.probes.needle import digit_accuracy, make_item, make_items  # noqa: E402
from harness.plugins.recipe import build_product, product_dir  # noqa: E402
from harness.results import read_training_log  # noqa: E402
from methods.procedural_pretraining import needle_finetune as ft  # noqa: E402
from methods.recipes import tinylm  # noqa: E402

TINY: dict[str, Any] = {"steps": 4, "d_model": 32, "n_layers": 1, "n_heads": 4, "ffn": 64,
                        "seq_len": 64, "batch": 2, "warmup": 1, "corpus": "stdlib",
                        "kind": "dyck", "fraction": 0.25}
FT: dict[str, Any] = {"finetune_steps": 3, "finetune_items": 16, "finetune_batch": 2}


def _digest(folder: Path) -> str:
    return hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()


def test_training_items_are_held_out() -> None:
    scored = {i.target for s in (0, ft.PILOT_STREAM) for i in make_items(64, seed=s)}
    raw = make_items(2048, seed=ft.TRAIN_STREAM)  # the unfiltered stream repeats test keys
    assert scored & {i.target for i in raw}
    # read through the task: the generator's own items, in stream order
    assert ft.needles(3, 7) == [ft.Needle(i.prompt, i.target) for i in make_items(3, seed=7)]
    head = ft.train_items(40, 0)
    assert head[0] == ft.Needle(make_item(0, ft.TRAIN_STREAM).prompt,
                                 make_item(0, ft.TRAIN_STREAM).target)
    for text in ("1234", " 1234.", "12", "9234", ""):
        assert ft.digits_in_place(text, "1234") == digit_accuracy(text, "1234")
    train = ft.train_items(2048, 0)
    assert len(train) == 2048 and not scored & {i.target for i in train}
    assert len({i.target for i in train}) > 1000  # many distinct keys, not a few
    assert ft.train_items(300, 0) == train[:300]
    assert ft.train_items(8, 0) != ft.train_items(8, 1)
    prompt, answer = ft.needle_rows(ft.train_items(1, 0))[0]
    assert bytes(prompt).decode().endswith("The pass key is ")  # the evaluated format
    assert bytes(answer).decode().isdigit() and len(answer) == 4
    first, rest = ft.needle_rows(ft.train_items(1, 0), loss="text")[0]
    assert first + rest == prompt + answer and len(first) == 1  # every byte after the first
    with pytest.raises(ValueError):
        ft.needle_rows(ft.train_items(1, 0), loss="digits")


@pytest.mark.slow  # seven tiny builds: ~10 s on a busy machine
def test_recipe_finetunes_the_cached_base(tmp_path: Path) -> None:
    done = build_product("procedural-pretraining", {**TINY, **FT}, seed=1, cache_root=tmp_path)
    base = product_dir("procedural-pretraining", TINY, seed=1, cache_root=tmp_path)
    assert (base / "product.json").is_file()  # built on the way, into the same cache
    record = json.loads((done / "finetune.json").read_text())
    assert record["base"] == base.name and record["items_stream"] == ft.TRAIN_STREAM + 1
    log = read_training_log(done)
    assert log["phase"].to_list() == ["finetune"] * 3
    assert _digest(done) != _digest(base)
    # same options and seed in a fresh cache: bit-identical; another seed: other weights
    again = build_product("procedural-pretraining", {**TINY, **FT}, seed=1,
                          cache_root=tmp_path / "again")
    assert _digest(again) == _digest(done)
    other = build_product("procedural-pretraining", {**TINY, **FT}, seed=2,
                          cache_root=tmp_path / "again")
    assert _digest(other) != _digest(done)
    # the same base, another budget: the base is reused, not retrained
    before = (base / "product.json").stat().st_mtime_ns
    build_product("procedural-pretraining", {**TINY, **FT, "finetune_steps": 1}, seed=1,
                  cache_root=tmp_path)
    assert (base / "product.json").stat().st_mtime_ns == before


def _answer_loss(model: Any, rows: list[tuple[list[int], list[int]]]) -> float:
    gen = torch.Generator().manual_seed(0)
    inputs, target = tinylm.answer_batches(rows, len(rows), gen)(1)
    with torch.no_grad():
        logits = model(input_ids=inputs, use_cache=False).logits
    return float(torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                   target.reshape(-1)))


def test_finetune_trains_on_the_key_and_learns(tmp_path: Path) -> None:
    base = build_product("procedural-pretraining", TINY, seed=0, cache_root=tmp_path)
    rows = ft.needle_rows(ft.train_items(4, 0))
    model = ft.load_product(base)
    start = _answer_loss(model, rows)
    seen: list[dict[str, Any]] = []
    ft.finetune(model, rows, 30, 1e-2, 4, seed=0, log=lambda **row: seen.append(row))
    assert len(seen) == 30 and {r["phase"] for r in seen} == {"finetune"}
    assert _answer_loss(model, rows) < 0.5 * start  # it fits the keys of its items
    # the targets are the key digits only: 4 of each row's positions, the rest ignored
    _, target = tinylm.answer_batches(rows, 4, torch.Generator().manual_seed(0))(1)
    assert ((target != -100).sum(dim=1) == 4).all()
    assert set(target[target != -100].tolist()) <= set(b"0123456789")


def test_recall_scores_greedy_completions_like_the_task() -> None:
    class Echo(torch.nn.Module):
        """Emits the byte at the needle's key position: a perfect recaller."""

        def __init__(self, key: bytes, start: int) -> None:
            super().__init__()
            self.key, self.start = key, start

        def forward(self, input_ids: torch.Tensor, use_cache: bool = False) -> Any:
            i = input_ids.shape[1] - self.start
            logits = torch.zeros(1, input_ids.shape[1], tinylm.VOCAB)
            logits[0, -1, self.key[i] if i < len(self.key) else 0] = 1.0
            return type("Out", (), {"logits": logits})()

    made = make_items(1, seed=3)[0]
    item = ft.Needle(made.prompt, made.target)
    start = len(item.prompt.encode())
    assert ft.recall(Echo(item.target.encode(), start), [item]) == {"accuracy": 1.0,
                                                                    "digits": 1.0}
    wrong = item.target[:2] + ("0" if item.target[2] != "0" else "1") + item.target[3]
    assert ft.recall(Echo(wrong.encode(), start), [item]) == {"accuracy": 0.0,
                                                              "digits": 0.75}


def test_pilot_scores_each_arm_at_each_checkpoint(tmp_path: Path) -> None:
    bases = {arm: build_product("procedural-pretraining", {**TINY, "fraction": f}, seed=0,
                                cache_root=tmp_path) for arm, f in (("none", 0.0), ("d", 0.5))}
    run = ft.pilot(bases, [2, 1], items=8, lr=1e-2, batch=2, seed=0, n_eval=3)
    again = ft.pilot(bases, [1, 2], items=8, lr=1e-2, batch=2, seed=0, n_eval=3)
    assert run == again  # seeded: the same curves
    assert run["schedule_steps"] == 2 and run["eval_stream"] == ft.PILOT_STREAM
    for curve in run["curves"].values():
        assert [c["step"] for c in curve] == [0, 1, 2]
        assert all(0.0 <= c["accuracy"] <= c["digits"] <= 1.0 for c in curve)
