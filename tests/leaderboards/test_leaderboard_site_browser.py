"""The leaderboard site in a real browser: Playwright drives Debian's Chromium.

It loads the index from a local HTTP server on 127.0.0.1, sorts a column, follows a link
to a benchmark page, checks the plot and the pairwise matrix there, and takes a screenshot.
Needs ``pip install playwright`` and ``/usr/bin/chromium`` (no browser is downloaded).
"""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from _lb_synth import write_log

from leaderboards.build import build

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("site")
    write_log(root / "logs", "a", model="m/alpha", scores=[1.0, 1.0, 1.0, 0.0, 1.0, 1.0],
              time=9.0)
    write_log(root / "logs", "b", model="m/beta", scores=[0.0, 1.0, 0.0, 0.0, 1.0, None],
              time=1.0)
    write_log(root / "logs", "c", model="m/gamma", scores=[0.0, 0.0, 0.0, 0.0, 1.0, 0.0],
              time=5.0)
    build(root / "logs", root / "out", copy_logs=True)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root / "out"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_site_sorts_follows_links_and_renders(site: str, tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed")
    profile = tmp_path / "profile"
    with sync_api.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), headless=True, args=FLAGS)
        try:
            page = context.new_page()
            page.goto(f"{site}/index.html")
            assert page.title() == "Leaderboard"
            models = page.locator("#overall tbody tr td:first-child")
            assert models.all_inner_texts() == ["m/alpha", "m/beta", "m/gamma"]  # best first
            page.click("#overall thead th:nth-child(4)")  # mean win rate: ascending
            assert models.all_inner_texts() == ["m/gamma", "m/beta", "m/alpha"]
            page.click("#overall thead th:nth-child(4)")  # again: descending
            assert models.all_inner_texts() == ["m/alpha", "m/beta", "m/gamma"]

            page.click("a.bench")
            page.wait_for_url("**/synth-bench.html")
            assert page.locator("svg.forest circle").count() == 3
            assert page.locator("#pairwise td.diag").count() == 3
            errors = page.locator("#entries tbody tr td.err")
            assert errors.all_inner_texts() == ["1"]  # beta's errored sample is shown
            page.click("#entries thead th:nth-child(14)")  # time per sample, ascending
            rows = page.locator("#entries tbody tr td:nth-child(3)")
            assert [t.split()[0] for t in rows.all_inner_texts()] == [
                "m/beta", "m/gamma", "m/alpha"]
            href = page.locator("#entries a.log").first.get_attribute("href")
            response = page.request.get(f"{site}/{href}")
            assert response.ok and b'"samples"' in response.body()  # the log link resolves
            shot = tmp_path / "benchmark.png"
            page.screenshot(path=str(shot), full_page=True)
            assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 5000
        finally:
            context.close()
    shutil.rmtree(profile, ignore_errors=True)
