"""The household Inspect task: real records as samples, the oracle's ceiling, tool errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessageTool

import benchmarks.paper_tasks.household.policies  # noqa: F401  (registers the oracle)
from benchmarks.paper_tasks.household.household import household, instance_seed, record_to_sample
from environments.household import generate, shortest_plan


def test_record_to_sample_on_a_generated_record() -> None:
    inst = generate(instance_seed("test", 0, 2))
    sample = record_to_sample(inst.to_dict(), "test")
    assert sample.id == "household-test-s1000002"
    assert isinstance(sample.input, list)
    system, user = sample.input
    assert "Episode: household seed=1000002 steps=8-20" in system.text
    assert user.text.startswith(f"Your task is to: {inst.goal_text}.\n")
    assert sample.metadata is not None
    assert sample.metadata["optimal"] == inst.optimal == len(shortest_plan(inst) or [])
    assert sample.metadata["instance"] == inst.to_dict()


def test_sample_ids_are_stable_and_splits_disjoint() -> None:
    a = [s.id for s in household(n=4).dataset]
    assert a == [s.id for s in household(n=4).dataset]
    assert a == [f"household-test-s{1_000_000 + i}" for i in range(4)]
    train = [s.id for s in household(n=4, split="train", seed=10).dataset]
    assert train == [f"household-train-s{10 + i}" for i in range(4)]


@pytest.mark.slow
def test_the_oracle_solves_every_episode_optimally(tmp_path: Path) -> None:
    log = inspect_eval(household(n=3), model="scripted/household-oracle",
                       log_dir=str(tmp_path), display="none")[0]
    assert log.status == "success" and log.samples
    for sample in log.samples:
        value = sample.scores["household_score"].value  # type: ignore[index]
        assert isinstance(value, dict)
        assert value["success"] == 1.0 and value["efficiency"] == 1.0
        assert value["invalid"] == 0.0 and value["steps"] == sample.metadata["optimal"]
        # one call per action plus the submit; every call's prompt length is recorded
        assert value["model_calls"] == sample.metadata["optimal"] + 1
        assert value["prompt_tokens"] > 0
        lengths = sample.scores["household_score"].metadata["prompt_tokens_per_call"]  # type: ignore[index]
        assert len(lengths) == value["model_calls"] and lengths == sorted(lengths)


def test_bad_actions_come_back_as_tool_errors_and_count(tmp_path: Path) -> None:
    steps = [{"tool": "take", "arguments": {"item": "unicorn 1"}},
             {"tool": "go", "arguments": {"target": "attic"}},
             {"tool": "look", "arguments": {}},
             {"tool": "look", "arguments": {}}, "done"]
    log = inspect_eval(household(n=1, step_limit=3), model="scripted/sequence",
                       model_args={"steps": json.dumps(steps)}, log_dir=str(tmp_path),
                       display="none")[0]
    assert log.samples
    sample = log.samples[0]
    tools = [m for m in sample.messages if isinstance(m, ChatMessageTool)]
    assert [m.function for m in tools[:4]] == ["take", "go", "look", "look"]
    assert tools[0].error is not None and "no object called 'unicorn 1'" in tools[0].error.message
    assert tools[1].error is not None and "no room or place" in tools[1].error.message
    assert tools[2].error is None and "You are in the middle of the" in tools[2].text
    assert tools[3].error is not None and "step limit (3)" in tools[3].error.message
    value = sample.scores["household_score"].value  # type: ignore[index]
    assert isinstance(value, dict)
    assert value["success"] == 0.0 and value["invalid"] == 2.0 and value["steps"] == 3.0


def test_goal_kinds_keep_only_those_instances() -> None:
    task = household(n=3, goal_kinds="clean,heat")
    kinds = [s.metadata["goal_kind"] for s in task.dataset if s.metadata]
    assert len(kinds) == 3 and set(kinds) <= {"clean", "heat"}
    import pytest

    with pytest.raises(ValueError, match="unknown goal kinds"):
        household(n=1, goal_kinds="juggle")
