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
page's visible text and accessibility tree instead.

    inspect eval benchmarks/worldtravel_webscape --model scripted/webscape-oracle
    inspect eval benchmarks/worldtravel_webscape --model scripted/webscape-crawler
    inspect eval harness/worldtravel_webscape --model openai/gpt-4o -T vision=false --limit 10
"""

from __future__ import annotations

import asyncio
from typing import Any

from inspect_ai import Task, task
from inspect_ai.agent import as_solver, react
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.solver import TaskState

from benchmarks.worldtravel.scorer import worldtravel_checker
from benchmarks.worldtravel.worldtravel import record_to_sample as text_record_to_sample
from environments.worldtravel.site import public_dir
from environments.worldtravel.store import shipped_scenarios, shipped_world
from harness.browser import StaticSiteServer, browser_cleanup, browser_setup, browser_tools
from harness.tasks import benchmark
from harness.tool_validity import tool_call_validity

DEFAULT_VISION = True
DEFAULT_MESSAGE_LIMIT = 150
DEFAULT_MIN_CONSTRAINTS = 0
DEFAULT_MAX_CONSTRAINTS = 100

INSTRUCTIONS = """\
You are a travel planner. The only source of facts is the Wayfarer travel website, open
in your browser at its home page (paths such as /index.html work with browser_navigate).
Hotels, restaurants, attractions, inter-city departures, calendars, timetables and
door-to-door travel times are all on the site; some details sit in collapsed sections,
calendars, badges or pictures. Find the facts you need, then submit one itinerary that
satisfies every requirement of the request."""


def record_to_sample(record: dict[str, Any], vision: bool = DEFAULT_VISION) -> Sample:
    """A scenario record as a sample: the text benchmark's sample, tagged with the mode."""
    sample = text_record_to_sample(record, "hidden")
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
) -> Task:
    """The 150 WorldTravel scenarios over the rendered site, scored by the exact checker.

    Args:
        vision: Screenshots as images (True) or visible text + accessibility tree (False).
        min_constraints: Keep scenarios with at least this many constraints.
        max_constraints: Keep scenarios with at most this many constraints.
        family: Keep one home city (AVA, BRI, COR, DUN, EST); None keeps all.
        message_limit: Conversation length limit per sample.
    """
    vision = vision if isinstance(vision, bool) else str(vision).lower() == "true"
    public_dir(shipped_world())  # render (or find) the cached site once, up front
    samples = [
        record_to_sample(s.to_record(), vision)
        for s in shipped_scenarios()
        if min_constraints <= s.n_constraints <= max_constraints
        and (family is None or s.family == family)
    ]
    mode = "vision" if vision else "text"
    return Task(
        dataset=MemoryDataset(samples, name=f"worldtravel-webscape-{mode}"),
        setup=browser_setup(start_site),
        solver=as_solver(react(prompt=INSTRUCTIONS, tools=browser_tools(vision))),
        cleanup=browser_cleanup,
        scorer=[worldtravel_checker(), tool_call_validity()],
        message_limit=message_limit,
        version="1.0.0",
        metadata={"benchmark": "worldtravel_webscape", "vision": vision},
    )
