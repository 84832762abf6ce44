"""Reference agents for WorldTravel-Webscape, as scripted policies.

``scripted/webscape-oracle`` opens the site's home page through the browser tool (proving
the per-sample server and browser work) and submits the CP-SAT reference plan: its
feasibility must be 100%. ``scripted/webscape-crawler`` does the same first step, then
plans with the exact solver on the world an HTML-only crawler rebuilt from the rendered
pages (``environments.worldtravel.site.crawler``: no CSS, no images). Its feasibility
measures how much the layout- and image-only facts matter. Both read the rendered site
from the shared cache rather than through the browser: they are yardsticks.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
import threading
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageTool, GenerateConfig
from inspect_ai.tool import ToolInfo

from environments.worldtravel.model import World
from environments.worldtravel.site import public_dir
from environments.worldtravel.site.crawler import crawler_plan, rebuild_world
from environments.worldtravel.store import scenario_index, shipped_world
from harness.models.scripted import PolicyResult, scripted_policy, tool_call

_ID = re.compile(r"Scenario ID: (\S+)")
NAVIGATE = "browser_navigate"


def scenario_id(input: list[ChatMessage]) -> str:
    """The ``Scenario ID:`` in the conversation."""
    for message in input:
        found = _ID.search(message.text)
        if found:
            return found.group(1)
    raise ValueError("no 'Scenario ID:' line in the conversation")


def _browse_then_submit(
    plan: dict[str, Any] | None, input: list[ChatMessage], tools: list[ToolInfo]
) -> PolicyResult:
    browsed = any(isinstance(m, ChatMessageTool) and m.function == NAVIGATE for m in input)
    if not browsed and any(t.name == NAVIGATE for t in tools):
        return tool_call(NAVIGATE, {"url": "/index.html"}, input)
    text = json.dumps(plan, separators=(",", ":")) if plan is not None else "no plan found"
    if any(t.name == "submit" for t in tools):
        return tool_call("submit", {"answer": text}, input)
    return text


_CRAWL_LOCK = threading.Lock()


@functools.cache
def _crawl() -> World:
    w = shipped_world()
    return rebuild_world(public_dir(w), w.first_date, w.n_dates, w.seed)


def crawled_world() -> World:
    """The shipped world as the HTML-only crawler sees it (crawled once per process)."""
    with _CRAWL_LOCK:
        return _crawl()


@functools.cache
def crawler_plan_for(sid: str) -> dict[str, Any] | None:
    """The crawler's plan for one scenario (cached: epochs and reruns reuse it)."""
    return crawler_plan(crawled_world(), scenario_index()[sid])


@scripted_policy("webscape-oracle")
def webscape_oracle(
    input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig, args: dict[str, Any]
) -> PolicyResult:
    """Open the home page, then submit the reference plan."""
    return _browse_then_submit(scenario_index()[scenario_id(input)].reference_plan, input, tools)


@scripted_policy("webscape-crawler")
async def webscape_crawler(
    input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig, args: dict[str, Any]
) -> PolicyResult:
    """Open the home page, then submit the solver's plan on the HTML-only crawl.

    The crawl and the solve run in a worker thread so the event loop (and the other
    samples' browsers) keep moving while CP-SAT works.
    """
    browsed = any(isinstance(m, ChatMessageTool) and m.function == NAVIGATE for m in input)
    plan = await asyncio.to_thread(crawler_plan_for, scenario_id(input)) if browsed else None
    return _browse_then_submit(plan, input, tools)
