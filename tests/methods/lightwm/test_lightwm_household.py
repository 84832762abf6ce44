"""LightWM on the household family: per-task-type schemas picked from sample metadata."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from benchmarks.paper_tasks.household.household import household
from benchmarks.paper_tasks.household.tools import TOOL_NAMES
from methods.lightwm.agent import lightwm, schema_for
from methods.lightwm.schema import load_schema

KINDS = ("place", "clean", "heat", "cool", "two")


def test_schema_names_are_filled_from_metadata() -> None:
    assert schema_for("household_{goal_kind}", {"goal_kind": "heat"}) == "household_heat"
    assert schema_for("causalgame", {}) == "causalgame"
    assert schema_for(None, {"goal_kind": "heat"}) is None
    with pytest.raises(ValueError, match="goal_kind"):
        schema_for("household_{goal_kind}", {})


@pytest.mark.parametrize("kind", KINDS)
def test_shipped_household_schemas_use_the_task_tools(kind: str) -> None:
    for name in (f"household_{kind}", f"household_llm_{kind}"):
        schema = load_schema(name)
        assert schema.induction is not None and schema.induction["method"] in ("rules", "llm")
        for sub in schema.subtasks:
            assert set(sub.actions) <= {*TOOL_NAMES, "*"}, (name, sub.name)
    rules = load_schema(f"household_{kind}")
    treatment = {"clean": "clean", "heat": "heat", "cool": "cool"}.get(kind)
    if treatment:  # the expert's treatment step is in the induced base sequence
        assert any(treatment in s.actions for s in rules.subtasks)


def test_lightwm_runs_a_household_episode_with_the_sample_s_schema(tmp_path: Path) -> None:
    log = inspect_eval(household(n=2, step_limit=4), model="scripted/fixed",
                       model_args={"answer": "{}"},
                       solver=lightwm(schema="household_{goal_kind}", max_steps=3),
                       log_dir=str(tmp_path), display="none")[0]
    assert log.status == "success" and log.samples
    for sample in log.samples:
        value = sample.scores["household_score"].value  # type: ignore[index]
        assert isinstance(value, dict)
        # fill + 3 action turns, no tool called (the policy only answers "{}")
        assert value["model_calls"] == 4 and value["steps"] == 0 and value["success"] == 0
        assert value["prompt_tokens"] > 0
