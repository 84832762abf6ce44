"""WorldTravel-Webscape speed: rendering the whole site (target <= 30 s), and a browser
launch plus one navigation step.

    .venv/bin/pytest tests/perf/test_webscape_perf.py -s --benchmark-enable

No timing is asserted; the numbers are printed and recorded by pytest-benchmark.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from environments.worldtravel.site import render_world, write_site
from environments.worldtravel.site.build import PUBLIC
from environments.worldtravel.site.render import slug, world_hash
from environments.worldtravel.store import shipped_world
from harness.browser import BrowserSession, StaticSiteServer

pytestmark = pytest.mark.perf


@pytest.mark.slow
def test_render_all_pages(benchmark: Any) -> None:
    world = shipped_world()
    start = time.perf_counter()
    build = render_world(world)
    print(f"\nrendered {len(build.pages())} pages in memory: {time.perf_counter() - start:.2f} s")
    result = benchmark.pedantic(lambda: len(render_world(world).pages()), rounds=2, iterations=1)
    assert result >= 2000


@pytest.mark.slow
def test_write_site_to_disk(benchmark: Any, tmp_path: Path) -> None:
    world = shipped_world()
    counter = iter(range(100))
    result = benchmark.pedantic(
        lambda: write_site(world, tmp_path / str(next(counter))), rounds=2, iterations=1
    )
    assert result["pages"] >= 2000


@pytest.mark.browser
def test_browser_launch_and_one_step(benchmark: Any, tmp_path: Path) -> None:
    world = shipped_world()
    write_site(world, tmp_path)
    hotel_page = f"/hotel/{slug(world_hash(world), 'AVA-H00')}.html"  # URLs are slugs, not ids

    async def launch_and_step() -> str:
        with StaticSiteServer(tmp_path / PUBLIC) as server:
            async with BrowserSession(server.origin) as session:
                return await session.navigate(hotel_page)

    status = benchmark.pedantic(lambda: asyncio.run(launch_and_step()), rounds=3, iterations=1)
    assert "Iris Hotel" in status
