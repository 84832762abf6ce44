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
    from harness.inspect_compat import registry_info_name

    web_scorers = [registry_info_name(s) for s in web.scorer or []]
    text_scorers = [registry_info_name(s) for s in text.scorer or []]
    assert web_scorers[: len(text_scorers)] == text_scorers  # the same checker, plus perception
    assert web_scorers[-1].endswith("webscape_perception")
    assert web.cleanup is not None and web.setup is not None


def test_webscape_prompt_names_places_and_holds_no_record_ids() -> None:
    import re

    from environments.worldtravel.store import shipped_world

    world = shipped_world()
    ids = [r.id for g in (world.hotels, world.restaurants, world.attractions, world.links)
           for r in g] + [c.station for c in world.cities]
    pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, ids)) + r")\b")
    web, text = worldtravel_webscape(), worldtravel()
    for w in web.dataset:
        body = str(w.input).split("Submit ONE JSON object")[0]  # the schema's examples aside
        assert not pattern.search(body), (w.id, pattern.search(body))
        assert str(w.input).startswith(f"Scenario ID: {w.id}")
        assert "Submit ONE JSON object" in str(w.input)
    assert any(pattern.search(str(t.input)) for t in text.dataset)  # the text one has ids


# max_constraints=8 keeps the two smallest scenarios (1-day trips with 8 constraints)


def test_interface_and_agent_options() -> None:
    from harness.inspect_compat import registry_info_name

    gym = worldtravel_webscape(interface="browsergym", agent="browse", max_constraints=8)
    assert gym.metadata is not None and gym.metadata["interface"] == "browsergym"
    assert "browse_agent" in registry_info_name(gym.solver)
    with pytest.raises(ValueError, match="interface"):
        worldtravel_webscape(interface="selenium")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="agent"):
        worldtravel_webscape(agent="human")  # type: ignore[arg-type]


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
    task = worldtravel_webscape(vision=vision, max_constraints=8)
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
def test_browse_agent_reads_text_and_layout_but_not_images(tmp_path: Path) -> None:
    """The text-only browsing agent on one scenario: every text and layout fact it relied
    on is right, image facts are wrong, so the plan fails on perception, not planning."""
    task = worldtravel_webscape(vision=False, agent="browse", interface="browsergym")
    task.dataset = task.dataset.filter(lambda s: s.id == "wt-s0-005")
    [log] = eval(task, model="scripted/webscape-oracle", log_dir=str(tmp_path), display="none")
    assert log.status == "success" and log.samples
    [sample] = log.samples
    assert sample.scores is not None
    check, seen = sample.scores["worldtravel_checker"], sample.scores["webscape_perception"]
    meta = seen.metadata or {}
    assert meta["browse_error"] is None and meta["steps"] > 50 and meta["pages_visited"] > 50
    assert sample.metadata["browse"]["actions"]["click"] > 5  # pagination and collapsed tabs
    assert meta["by_modality"]["text"] == 1.0 and meta["by_modality"]["image"] < 1.0
    assert isinstance(check.value, dict) and check.value["feasible"] == 0.0
    assert all(k.split(".", 1)[1].startswith(("travel", "seatings", "timed_entry"))
               or ".prices." in k or k.endswith(("check_in", "check_out", "closures"))
               for k in meta["misread"])
    assert open_sessions() == 0


@pytest.mark.browser
@pytest.mark.slow
@has_chromium
def test_browser_is_closed_when_the_sample_errors(tmp_path: Path) -> None:
    task = worldtravel_webscape(vision=False, max_constraints=8)
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
