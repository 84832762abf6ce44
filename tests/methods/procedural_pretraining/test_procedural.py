"""The procedural-pretraining recipe: the token-exact switch sits where the plan says, the
data stream at fraction 0 is the corpus-only stream (and its weights the plain tiny LM's),
the same seed rebuilds the same weights, and the product loads and is scored."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

import torch  # noqa: E402

from harness.corpus import load_corpus  # noqa: E402
from harness.plugins.recipe import build_product  # noqa: E402
from harness.results import read_product, read_training_log  # noqa: E402
from methods.procedural_pretraining.procedural import (  # noqa: E402
    Plan,
    data_to_equal_loss,
    front_loaded,
    tiny_config,
)
from methods.procedural_pretraining.procedural_data import CLOSE, OPEN, is_balanced  # noqa: E402
from methods.recipes import tinylm  # noqa: E402

TINY: dict[str, Any] = {"steps": 12, "d_model": 32, "n_layers": 1, "n_heads": 4, "ffn": 64,
                        "seq_len": 64, "batch": 4, "warmup": 3, "corpus": "stdlib"}
STEP = 4 * 64  # tokens a TINY step


def test_plan_is_token_exact() -> None:
    plan = Plan(steps=200, batch=8, seq_len=256, fraction=0.001)
    assert plan.total == 409_600 and plan.procedural == 410  # the paper's 0.1%: 1.6 windows
    assert [plan.row_tokens(1, r) for r in range(3)] == [256, 154, 0]
    assert plan.phase(1) == "mixed" and plan.phase(2) == "corpus" and plan.switch_step() == 1
    tenth = Plan(200, 8, 256, 0.1)
    assert tenth.procedural == 40_960 and tenth.switch_step() == 21
    assert tenth.phase(20) == "procedural" and tenth.phase(21) == "corpus"
    assert sum(tenth.step_tokens(s) for s in range(1, 201)) == 40_960
    assert Plan(200, 8, 256, 0.0).switch_step() == 1 and Plan(10, 2, 8, 1.0).switch_step() == 11
    with pytest.raises(ValueError):
        Plan(10, 2, 8, 1.5)


def _streams(fraction: float, kind: str = "dyck") -> tuple[Any, Any, Plan]:
    cfg = tiny_config(TINY)
    data = tinylm.text_bytes(load_corpus("stdlib").train, cfg.seq_len)
    plan = Plan(cfg.steps, cfg.batch, cfg.seq_len, fraction)
    mixed = front_loaded(tinylm.window_batches(data, cfg, 5), plan, kind, seed=5, dyck_k=8)
    return mixed, tinylm.window_batches(data, cfg, 5), plan


def test_fraction_zero_is_the_corpus_stream() -> None:
    mixed, plain, _ = _streams(0.0)
    for step in range(1, 13):
        (a, b), (c, d) = mixed(step), plain(step)
        assert torch.equal(a, c) and torch.equal(b, d)


def test_switch_happens_where_stated() -> None:
    fraction = (2 * STEP + 64 + 10) / (12 * STEP)  # 2 steps, 1 row and 10 tokens
    mixed, plain, plan = _streams(fraction)
    assert plan.procedural == 2 * STEP + 74 and plan.switch_step() == 3
    for step in range(1, 13):
        (inputs, target), (_, corpus) = mixed(step), plain(step)
        assert inputs[:, 0].eq(tinylm.BOS).all() and torch.equal(inputs[:, 1:], target[:, :-1])
        high = target >= OPEN  # Dyck bytes; the stdlib corpus is ASCII
        if step <= 2:
            assert high.all()
            assert all(is_balanced(bytes(row.tolist()), 8) for row in target)  # one word a row
        elif step == 3:
            assert high[0].all() and high[1, :10].all() and not high[1, 10:].any()
            assert torch.equal(target[1, 10:], corpus[1, 10:])  # the corpus bytes it replaced
            assert torch.equal(target[2:], corpus[2:])
        else:
            assert torch.equal(target, corpus)  # after the switch: the baseline's windows
    assert int((target >= CLOSE).sum()) == 0


def test_copy_and_sort_windows() -> None:
    for kind in ("copy", "sort"):
        mixed, _, _ = _streams(1.0, kind)
        _, target = mixed(1)
        row = bytes(target[0].tolist())
        x, y = row.split(b"\n")[0].split(b"|")
        assert len(x) == 31  # (64 - 2) // 2 symbols at seq_len 64
        assert (y == x if kind == "copy" else y == bytes(sorted(x)))


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("recipes")


def _digest(folder: Path) -> str:
    return hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def product(cache: Path) -> Path:
    return build_product("procedural-pretraining", {**TINY, "fraction": 0.25}, seed=1,
                         cache_root=cache)


def test_product_rebuilds_bit_for_bit_and_logs_its_phases(product: Path,
                                                          tmp_path: Path) -> None:
    again = build_product("procedural-pretraining", {**TINY, "fraction": 0.25}, seed=1,
                          cache_root=tmp_path)
    assert again.name == product.name and _digest(again) == _digest(product)
    log = read_training_log(product)
    assert log["loss"].to_list() == read_training_log(again)["loss"].to_list()
    assert log["phase"].to_list() == ["procedural"] * 3 + ["corpus"] * 9
    assert log["procedural_tokens"].to_list() == [STEP] * 3 + [0] * 9
    assert log["tokens_total"][-1] == 12 * STEP
    assert read_product(product)["options"]["fraction"] == 0.25
    other = build_product("procedural-pretraining", {**TINY, "fraction": 0.25, "kind": "copy"},
                          seed=1, cache_root=tmp_path)
    assert _digest(other) != _digest(product)


def test_fraction_zero_trains_the_plain_tiny_lm(cache: Path, tmp_path: Path) -> None:
    zero = build_product("procedural-pretraining", {**TINY, "fraction": 0.0}, seed=1,
                         cache_root=cache)
    plain = tinylm.train(tiny_config(TINY), load_corpus("stdlib").train, seed=1)
    tinylm.save(plain, tiny_config(TINY), tmp_path)
    assert _digest(zero) == _digest(tmp_path)
    assert set(read_training_log(zero)["phase"]) == {"corpus"}


def test_engine_scores_the_product(product: Path) -> None:
    from inspect_ai import eval as inspect_eval

    from benchmarks.probes.bpb import bpb
    from benchmarks.probes.induction import induction
    from benchmarks.probes.needle import needle

    logs = inspect_eval([bpb(n=2, corpus="stdlib"), induction(n=2), needle(n=2)],
                        model="whitebox/tinylm", model_args={"model_path": str(product)},
                        display="none", log_dir=str(product.parent / "logs"))
    assert [log.status for log in logs] == ["success"] * 3
    results = logs[2].results
    assert results is not None
    names = {f"{s.name}/{m}" for s in results.scores for m in s.metrics}
    assert {"accuracy/mean", "digits/mean"} <= names


def _write_log(folder: Path, losses: list[float], procedural: int = 0) -> Path:
    import json

    folder.mkdir()
    total = 0
    with (folder / "train_log.jsonl").open("w") as handle:
        for step, loss in enumerate(losses, 1):
            total += 10
            extra = {"phase": "procedural" if step <= procedural else "corpus",
                     "procedural_tokens": 10 if step <= procedural else 0}
            handle.write(json.dumps({"step": step, "loss": loss, "tokens": 10, "flops": 1,
                                     "tokens_total": total, "flops_total": step,
                                     "wall_s": 0.0, **extra}) + "\n")
    return folder


def test_data_to_equal_loss_on_known_curves(tmp_path: Path) -> None:
    base = _write_log(tmp_path / "base", [10.0 - 0.1 * s for s in range(100)])  # ends at 0.1
    fast = _write_log(tmp_path / "fast", [99.0] * 10 + [10.0 - 0.2 * s for s in range(90)],
                      procedural=10)
    out = data_to_equal_loss(base, fast, window=1)
    assert out["target_loss"] == pytest.approx(0.1)
    # 10 - 0.2 s <= 0.1 first at s = 50, the run's step 10 + 50 + 1 = 61 of 100
    assert out["step"] == 61 and out["share_total"] == pytest.approx(0.61)
    assert out["share_corpus"] == pytest.approx(0.51)  # its 10 procedural steps not counted
    slow = _write_log(tmp_path / "slow", [10.0 - 0.05 * s for s in range(100)])
    assert data_to_equal_loss(base, slow, window=1)["step"] is None
    assert data_to_equal_loss(base, base, window=5)["share_total"] == 1.0
