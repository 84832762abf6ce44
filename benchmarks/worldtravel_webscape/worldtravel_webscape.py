"""WorldTravel-Webscape: the WorldTravel scenarios, with the world reachable only as a website.

WorldTravel (ICML 2026; no data or code public, rebuilt here from the paper's design):
WorldTravel-Webscape is its multimodal environment of 2,000+ rendered, layout-dependent
travel pages from which the agent must recover the executable constraints. Here the same
150 scenarios, checker and scorer as ``benchmarks/worldtravel`` (so the two are directly
comparable) meet a static site rendered from the same world
(``environments.worldtravel.site``): search lists with filters and pagination, detail
pages, calendars, timetables, policy pages, and images of text. Each sample gets its own
site server on 127.0.0.1 and a headless Chromium that can reach nothing else.

``-T vision=true`` (default) gives screenshots as images; ``-T vision=false`` gives the
page's visible text and accessibility tree instead. ``-T interface=browsergym`` swaps the
classic tools for BrowserGym-style ones (actions by element id on an accessibility tree
with ids, Set-of-Marks screenshots); ``-T agent=browse`` runs the scripted text-only
browsing reference agent instead of the model. The request names places, never ids.

    inspect eval benchmarks/worldtravel_webscape --model scripted/webscape-oracle
    inspect eval benchmarks/worldtravel_webscape --model scripted/webscape-crawler
    inspect eval harness/worldtravel_webscape --model openai/gpt-4o -T vision=false --limit 10
    inspect eval harness/worldtravel_webscape --model openai/gpt-4o -T interface=browsergym
    inspect eval harness/worldtravel_webscape --model scripted/webscape-oracle -T agent=browse
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from inspect_ai import Task, task
from inspect_ai.agent import as_solver, react
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.solver import TaskState

from benchmarks.worldtravel.scorer import worldtravel_checker
from benchmarks.worldtravel.worldtravel import record_to_sample as text_record_to_sample
from benchmarks.worldtravel_webscape.browse import browse_agent
from benchmarks.worldtravel_webscape.scorer import webscape_perception
from environments.worldtravel.plan import PLAN_SCHEMA_TEXT
from environments.worldtravel.scenario import Scenario
from environments.worldtravel.site import public_dir
from environments.worldtravel.site.request import webscape_request
from environments.worldtravel.store import shipped_scenarios, shipped_world
from harness.browser import (
    StaticSiteServer,
    browser_cleanup,
    browser_setup,
    browser_tools,
    browsergym_tools,
)
from harness.plugins.benchmark import benchmark
from harness.tool_validity import tool_call_validity

DEFAULT_VISION = True
DEFAULT_MESSAGE_LIMIT = 150
DEFAULT_MIN_CONSTRAINTS = 0
DEFAULT_MAX_CONSTRAINTS = 100
Interface = Literal["classic", "browsergym"]
AgentKind = Literal["react", "browse"]
DEFAULT_INTERFACE: Interface = "classic"
DEFAULT_AGENT: AgentKind = "react"

INSTRUCTIONS = """\
You are a travel planner. The only source of facts is the Wayfarer travel website, open
in your browser at its home page (paths such as /index.html work with browser_navigate).
Hotels, restaurants, attractions, inter-city departures, calendars, timetables and
door-to-door travel times are all on the site; some details sit in collapsed sections,
calendars, badges or pictures. Places are named as the site names them; find them through
the city pages and their listings (each record's ID, needed in the plan, is on its page).
Find the facts you need, then submit one itinerary that satisfies every requirement of
the request."""


def record_to_sample(record: dict[str, Any], vision: bool = DEFAULT_VISION) -> Sample:
    """A scenario record as a sample: the text benchmark's sample with the request
    rephrased to name places instead of ids, tagged with the mode."""
    sample = text_record_to_sample(record, "hidden")
    request = webscape_request(shipped_world(), Scenario.from_record(record))
    sample.input = "\n".join([f"Scenario ID: {record['id']}", "", request, "", PLAN_SCHEMA_TEXT])
    sample.metadata = {**(sample.metadata or {}), "vision": vision, "benchmark": "webscape"}
    return sample


async def start_site(state: TaskState) -> tuple[str, Any]:
    """Serve the cached rendered site on a free 127.0.0.1 port for one sample."""
    server = StaticSiteServer(public_dir(shipped_world())).start()

    async def stop() -> None:
        await asyncio.to_thread(server.stop)

    return server.origin, stop


@benchmark("worldtravel_webscape", extra="web")
@task
def worldtravel_webscape(
    vision: bool = DEFAULT_VISION,
    min_constraints: int = DEFAULT_MIN_CONSTRAINTS,
    max_constraints: int = DEFAULT_MAX_CONSTRAINTS,
    family: str | None = None,
    message_limit: int = DEFAULT_MESSAGE_LIMIT,
    interface: Interface = DEFAULT_INTERFACE,
    agent: AgentKind = DEFAULT_AGENT,
) -> Task:
    """The 150 WorldTravel scenarios over the rendered site, scored by the exact checker.

    Args:
        vision: Screenshots as images (True) or visible text + accessibility tree (False).
        min_constraints: Keep scenarios with at least this many constraints.
        max_constraints: Keep scenarios with at most this many constraints.
        family: Keep one home city (AVA, BRI, COR, DUN, EST); None keeps all.
        message_limit: Conversation length limit per sample.
        interface: ``classic`` (navigate/click/type/...) or ``browsergym`` (actions by
            element id, accessibility tree with ids, Set-of-Marks screenshots).
        agent: ``react`` (the model browses) or ``browse`` (the scripted text-only
            browsing reference agent; the model is not called).
    """
    vision = vision if isinstance(vision, bool) else str(vision).lower() == "true"
    public_dir(shipped_world())  # render (or find) the cached site once, up front
    samples = [
        record_to_sample(s.to_record(), vision)
        for s in shipped_scenarios()
        if min_constraints <= s.n_constraints <= max_constraints
        and (family is None or s.family == family)
    ]
    if interface not in ("classic", "browsergym"):
        raise ValueError(f"interface must be classic or browsergym, not {interface!r}")
    if agent not in ("react", "browse"):
        raise ValueError(f"agent must be react or browse, not {agent!r}")
    mode = "vision" if vision else "text"
    tools = browsergym_tools(vision) if interface == "browsergym" else browser_tools(vision)
    plan_solver = (
        browse_agent() if agent == "browse"
        else as_solver(react(prompt=INSTRUCTIONS, tools=tools))
    )
    metadata: dict[str, Any] = {"benchmark": "worldtravel_webscape", "vision": vision}
    if interface != DEFAULT_INTERFACE or agent != DEFAULT_AGENT:
        metadata |= {"interface": interface, "agent": agent}
    return Task(
        dataset=MemoryDataset(samples, name=f"worldtravel-webscape-{mode}"),
        setup=browser_setup(start_site),
        solver=plan_solver,
        cleanup=browser_cleanup,
        scorer=[worldtravel_checker(), tool_call_validity(), webscape_perception()],
        message_limit=message_limit,
        version="2.1.0",
        metadata=metadata,
    )
