"""scout-sft at toy size: scouts' dialogues rendered as the white-box provider renders a
forced ``move`` call, the product bit-identical from its seed, and scored by the game task
through ``whitebox/``."""

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
from methods.scout.data import (  # noqa: E402
    answer_text,
    opening_prompts,
    scout_task,
    window_prompts,
)
from methods.scout.qlearning import QConfig  # noqa: E402

TASK = "benchmarks/paper_tasks/scout/scout.py"
TOY: dict[str, Any] = {"task": TASK, "task_args": '{"split": "train", "n": 1}',
                       "episodes": 150, "steps": 3, "batch": 2, "d_model": 32,
                       "n_layers": 1, "n_heads": 4}


def test_scout_dialogues_and_prompts(tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    from methods.recipes import tinylm

    data = scout_task(TASK, '{"split": "train", "n": 2, "games": "frozenlake"}',
                      QConfig(episodes=300), seed=0)
    stats = data.stats["frozenlake"]
    assert stats["instances"] == 2 and stats["solved"] == len(data.dialogues) >= 1
    assert stats["transitions"] > 0 and stats["moves"] >= stats["optimal"] > 0
    tinylm.save_tokenizer(tmp_path, 4096)
    tok = AutoTokenizer.from_pretrained(str(tmp_path), local_files_only=True)
    pairs = window_prompts(data, tok)
    assert len(pairs) == stats["moves"]
    prompt, answer = pairs[0]
    assert prompt.endswith('<tool_call>{"name": "move", "arguments": {')
    assert "FrozenLake" in prompt and "new game" in prompt and '"direction"' in prompt
    assert answer in {answer_text(data.tool, d) for d in ("up", "down", "left", "right")}
    assert answer.endswith('"}}</tool_call>')
    with pytest.raises(ValueError, match="JSON"):
        scout_task(TASK, "n=2", QConfig(), 0)


def test_product_is_reproducible_and_scored_through_whitebox(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model
    from transformers import AutoTokenizer

    from harness.models import whitebox

    first = build_product("scout-sft", TOY, 0, cache_root=tmp_path / "a")
    again = build_product("scout-sft", TOY, 0, cache_root=tmp_path / "b")
    assert (first / "model.safetensors").read_bytes() == (
        again / "model.safetensors").read_bytes()
    info = json.loads((first / "scout.json").read_text())
    assert set(info["scouts"]) == {"frozenlake", "sokoban", "sliding"}
    assert info["sft"]["examples"] > 0 and info["sft"]["steps"] == 3
    seen: list[str] = []
    decode = whitebox.WhiteBoxLM.generate_batch

    def spy(self: Any, prompts: list[str], *args: Any, **kwargs: Any) -> Any:
        seen.extend(prompts)
        return decode(self, prompts, *args, **kwargs)

    monkeypatch.setattr(whitebox.WhiteBoxLM, "generate_batch", spy)
    task = benchmarks.paper_tasks.scout.scout.scout(games="frozenlake", n=1, max_tokens=8)
    model = get_model("whitebox/tinylm", model_path=str(first))
    (log,) = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success", log.error
    value = log.samples[0].scores["scout_score"].value  # type: ignore[index]
    assert value["moves"] + value["invalid_calls"] >= 1
    assert value["solved"] in (0.0, 1.0)
    # what the model is asked at test is what the recipe trains on, byte for byte
    tok = AutoTokenizer.from_pretrained(str(first), local_files_only=True)
    assert seen[0] == opening_prompts(TASK, '{"games": "frozenlake", "n": 1}', tok)[0]


def test_scout_cost_counts_every_transition() -> None:
    from methods.scout.cost import scout_cost

    cost = scout_cost(TASK, '{"games": "frozenlake,sokoban", "n": 1}', QConfig(), 0)
    total = cost["total"]
    assert set(cost["games"]) == {"frozenlake", "sokoban"} and total["instances"] == 2
    assert total["transitions"] == sum(g["transitions"] for g in cost["games"].values()) > 0
    assert 0 < total["cpu_s_per_transition"] < 1e-3
