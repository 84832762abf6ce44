"""arith-sft / rl recipes at toy size: held-out items never trained on, products bit-identical
from their seed, the training log readable through harness.results, and the RL product
scored by the engine's esamp_arith task through whitebox/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from harness.plugins.recipe import build_product  # noqa: E402
from harness.results import read_training_log  # noqa: E402
from methods.rl_pmd import rl_pmd  # noqa: E402

TOY: dict[str, Any] = {"sft_steps": 20, "sft_d_model": 32, "sft_n_layers": 1,
                       "sft_task_args": '{"n": 60, "seed": 1, "family": "sum2"}',
                       "sft_holdout_args": '{"n": 300, "seed": 0, "family": "sum2"}'}
RL_TOY = {**TOY, "steps": 3, "prompts_per_step": 2, "k": 2, "max_new_tokens": 4,
          "ckpt_every": 2, "algo": "grpo", "staleness": 1}


def _sft(options: dict[str, Any]) -> dict[str, Any]:
    return {k.removeprefix("sft_"): v for k, v in options.items() if k.startswith("sft_")}


def test_held_out_items_are_dropped() -> None:
    sums = ', "family": "sum2"}'
    _, items, dropped = rl_pmd.train_items("harness/esamp_arith", '{"n": 60, "seed": 1' + sums,
                                           '{"n": 300, "seed": 0' + sums)
    _, held, _ = rl_pmd.train_items("harness/esamp_arith", '{"n": 300, "seed": 0' + sums,
                                    '{"n": 1, "seed": 99' + sums)
    prompts = {json.dumps(i.prompt) for i in held}
    assert dropped > 0 and len(items) == 60 - dropped
    assert not any(json.dumps(i.prompt) in prompts for i in items)
    with pytest.raises(ValueError, match="JSON"):
        rl_pmd.train_items("harness/esamp_arith", "n=3", "{}")


def test_rl_product_is_reproducible_and_scored_by_the_engine(tmp_path: Path) -> None:
    first = build_product("rl", RL_TOY, 0, cache_root=tmp_path / "a")
    again = build_product("rl", RL_TOY, 0, cache_root=tmp_path / "b")
    assert (first / "model.safetensors").read_bytes() == (
        again / "model.safetensors").read_bytes()
    sft = build_product("arith-sft", _sft(TOY), 0, cache_root=tmp_path / "a")
    frame = read_training_log(first)
    # the toy start gets no sum right: every advantage is 0, so with no KL term GRPO's
    # update is exactly zero and the product is the start, bit for bit
    same = (first / "model.safetensors").read_bytes() == (sft / "model.safetensors").read_bytes()
    assert same == (frame["reward"].max() == 0)
    info = json.loads((first / "rl.json").read_text())
    assert info["dropped_as_held_out"] > 0 and info["cpu_s"] > 0
    assert not list(first.parent.glob(".*.run"))  # the run folder is gone once complete
    assert frame["step"].to_list() == [1, 2, 3]
    assert frame["batch_policy_step"].to_list() == [0, 0, 1]
    assert {"reward", "kl", "cpu_s", "wall_s"} <= set(frame.columns)

    from inspect_ai import eval as inspect_eval

    from harness.factorial.cells import load_task

    task = load_task("harness/esamp_arith", {"n": 2, "samples": 2, "seed": 0, "family": "sum2"})
    log = inspect_eval(task, model="whitebox/tinylm", model_args={"model_path": str(first)},
                       display="none", log_dir=str(tmp_path / "logs"))[0]
    assert log.status == "success"
    assert log.results is not None and log.results.scores
