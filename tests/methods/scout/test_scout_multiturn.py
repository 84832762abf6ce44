"""Multi-turn rollouts for the RL trainer: whole episodes, one group per batch, each move's
tokens masked after its own turn's prompt; the trainer runs on them unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

import benchmarks.paper_tasks.scout.scout  # noqa: E402,F401  (registers harness/scout)
import methods.scout.recipe  # noqa: E402,F401  (registers scout-sft)
from harness.plugins.recipe import build_product  # noqa: E402
from methods.rl.multiturn import EpisodeGroups, parse_move  # noqa: E402

TASK = "benchmarks/paper_tasks/scout/scout.py"
TOY: dict[str, Any] = {"task": TASK, "task_args": '{"split": "train", "n": 1}',
                       "episodes": 150, "steps": 3, "batch": 2, "d_model": 32,
                       "n_layers": 1, "n_heads": 4}
ARGS = json.dumps({"split": "train", "n": 1, "games": "frozenlake", "limit_factor": 1.0,
                   "limit_extra": 2})
ACTIONS = ("up", "down", "left", "right")


def test_parse_move_reads_the_forced_completion() -> None:
    assert parse_move('"direction": "up"}}</tool_call>', "direction", ACTIONS) == "up"
    assert parse_move('"direction": "north"}}', "direction", ACTIONS) is None
    assert parse_move('"direction": "up', "direction", ACTIONS) is None
    assert parse_move("garbage", "direction", ACTIONS) is None


def test_episodes_become_one_masked_group_and_train(tmp_path: Path) -> None:
    from methods.rl.trainer import RLConfig, load_policy, train
    from methods.scout.data import render_window

    base = build_product("scout-sft", TOY, 0, cache_root=tmp_path / "cache")
    policy = load_policy(base)
    source = EpisodeGroups(TASK, ARGS, k=2, seed=0, max_new_tokens=8)
    batch = source.collect(policy, 1, 0)
    (group,) = batch.groups
    assert group.rewards.shape[0] == group.tokens.shape[0] >= 2  # >= one turn per episode
    assert group.old_logp is not None and group.old_logp.shape == group.tokens.shape
    sample = source.samples[0]
    first = render_window(sample.input[0].text, sample.input[1].text, source.tool,
                          policy.tokenizer)
    ids = policy.tokenizer(first, add_special_tokens=False).input_ids
    row = group.tokens[0]
    start = int(group.mask[0].argmax())  # the first move's tokens follow its own prompt
    assert group.prompt_ids + row[:start].tolist() == ids
    assert 0 < int(group.mask[0].sum()) <= 8
    again = source.collect(policy, 1, 0)  # batch index seeds everything
    assert again.groups[0].tokens.equal(group.tokens)
    out = train(RLConfig(algo="grpo", steps=1, k=2, lr=1e-4, ckpt_every=1), base,
                tmp_path / "run", source)
    assert (out / "config.json").is_file() and (tmp_path / "run" / "train_log.jsonl").is_file()


def test_k_below_two_is_refused() -> None:
    with pytest.raises(ValueError, match="k must be"):
        EpisodeGroups(TASK, ARGS, k=1, seed=0)
