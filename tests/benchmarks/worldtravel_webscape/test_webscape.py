"""The Webscape task: same scenarios and scorer as the text benchmark, browser lifecycle."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval
from inspect_ai.model import ChatMessage, GenerateConfig
from inspect_ai.tool import ToolInfo

from benchmarks.worldtravel.worldtravel import worldtravel
from benchmarks.worldtravel_webscape.policies import scenario_id
from benchmarks.worldtravel_webscape.worldtravel_webscape import (
    record_to_sample,
    worldtravel_webscape,
)
from environments.worldtravel.store import DATA_DIR
from harness.browser import open_sessions
from harness.browser.session import chromium_path
from harness.models.scripted import PolicyResult, scripted_policy, tool_call

has_chromium = pytest.mark.skipif(
    shutil.which(chromium_path()) is None and not Path(chromium_path()).exists(),
    reason="chromium not installed",
)


def test_record_to_sample_on_a_real_record() -> None:
    record = json.loads((DATA_DIR / "scenarios.jsonl").read_text().splitlines()[0])
    sample = record_to_sample(record, vision=False)
    assert sample.id == record["id"]
    assert f"Scenario ID: {record['id']}" in str(sample.input)
    assert sample.metadata is not None and sample.metadata["vision"] is False
    assert sample.metadata["n_constraints"] == record["n_constraints"]


def test_same_scenarios_and_scorer_as_the_text_benchmark() -> None:
    web, text = worldtravel_webscape(), worldtravel()
    assert [s.id for s in web.dataset] == [s.id for s in text.dataset]
    assert len(web.dataset) == 150
    assert [s.input for s in web.dataset] == [s.input for s in text.dataset]
    from harness.inspect_compat import registry_info_name

    assert [registry_info_name(s) for s in web.scorer or []] == [
        registry_info_name(s) for s in text.scorer or []
    ]
    assert web.cleanup is not None and web.setup is not None


def test_vision_flag_and_filters() -> None:
    task = worldtravel_webscape(vision=False, family="AVA", max_constraints=10)
    assert task.metadata == {"benchmark": "worldtravel_webscape", "vision": False}
    assert 0 < len(task.dataset) < 30
    assert all(s.metadata and s.metadata["vision"] is False for s in task.dataset)


def test_policy_reads_the_scenario_id() -> None:
    from inspect_ai.model import ChatMessageUser

    assert scenario_id([ChatMessageUser(content="Scenario ID: wt-s0-007\nhello")]) == "wt-s0-007"


@scripted_policy("webscape-test-crash")
def _crash(
    input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig, args: dict[str, Any]
) -> PolicyResult:
    """Browse once, then fail the sample with an error (cleanup must still run)."""
    if len(input) < 3:
        return tool_call("browser_navigate", {"url": "/index.html"}, input)
    raise RuntimeError("policy crashed on purpose")


@pytest.mark.browser
@pytest.mark.slow
@has_chromium
@pytest.mark.parametrize("vision", [True, False])
def test_oracle_is_feasible_and_browsers_are_closed(vision: bool, tmp_path: Path) -> None:
    task = worldtravel_webscape(vision=vision, max_constraints=6)
    task.dataset = task.dataset[:2]
    [log] = eval(task, model="scripted/webscape-oracle", log_dir=str(tmp_path), display="none")
    assert log.status == "success" and log.samples
    for sample in log.samples:
        assert sample.scores
        value = next(iter(sample.scores.values())).value
        assert isinstance(value, dict) and value["feasible"] == 1.0
        tools = [m for m in sample.messages if m.role == "tool"]
        assert tools and tools[0].function == "browser_navigate"
        assert "Title: Wayfarer" in tools[0].text
        assert sample.metadata["site_origin"].startswith("http://127.0.0.1:")
    assert open_sessions() == 0


@pytest.mark.browser
@pytest.mark.slow
@has_chromium
def test_browser_is_closed_when_the_sample_errors(tmp_path: Path) -> None:
    task = worldtravel_webscape(vision=False, max_constraints=6)
    task.dataset = task.dataset[:1]
    [log] = eval(
        task,
        model="scripted/webscape-test-crash",
        log_dir=str(tmp_path),
        display="none",
        fail_on_error=False,
    )
    assert log.samples and log.samples[0].error is not None
    assert "crashed on purpose" in log.samples[0].error.message
    assert open_sessions() == 0
