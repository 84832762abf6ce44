"""The leaderboard site in a real browser: Playwright drives Debian's Chromium.

It loads the index from a local HTTP server on 127.0.0.1 and checks what a person sees
first: every benchmark as a picture (entries with their intervals, tie groups shaded, the
floor and the oracle marked) above the tables, entries named as a person reads them (a
scripted agent run without a model is its agent, not ``none/none``). It sorts a column,
follows a link to a benchmark page, checks the picture, the tie groups and the pairwise
matrix there, and takes a screenshot whose pixels must show the shaded bands and the
reference colours. Needs ``pip install playwright`` and ``/usr/bin/chromium`` (no browser
is downloaded).
"""

from __future__ import annotations

import functools
import http.server
import json
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
BAND = (0xE3, 0xED, 0xF8)  # the first tie group's fill (leaderboards.site._BANDS)
ORACLE = (0x2E, 0x7D, 0x32)  # the oracle's dot and dashed line


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    root = tmp_path_factory.mktemp("site")
    write_log(root / "logs", "a", model="m/alpha", scores=[1.0, 1.0, 1.0, 0.0, 1.0, 1.0],
              time=9.0)
    write_log(root / "logs", "b", model="m/beta", scores=[0.0, 1.0, 0.0, 0.0, 1.0, None],
              time=1.0)
    write_log(root / "logs", "c", model="m/gamma", scores=[0.0, 0.0, 0.0, 0.0, 1.0, 0.0],
              time=5.0)
    write_log(root / "logs", "o", model="none/none", solver="synth/agents.py@oracle",
              scores=[1.0] * 6, time=0.5, tokens=(0, 0))
    build(root / "logs", root / "out", copy_logs=True)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root / "out"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", root / "out"
    finally:
        server.shutdown()
        server.server_close()


def _colours(png: Path) -> set[tuple[int, int, int]]:
    from PIL import Image

    with Image.open(png) as image:
        return {rgb for _, rgb in image.convert("RGB").getcolors(maxcolors=1 << 20) or []}


def test_site_shows_pictures_first_names_entries_and_renders(site: tuple[str, Path],
                                                             tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed")
    url, out = site
    doc = json.loads((out / "leaderboard.json").read_text())
    entries = doc["benchmarks"][0]["entries"]
    groups = [e["tie_group"] for e in entries]
    profile = tmp_path / "profile"
    with sync_api.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), headless=True, args=FLAGS)
        try:
            page = context.new_page()
            page.goto(f"{url}/index.html")
            assert page.title() == "Leaderboard"
            # the picture comes first: right under the title, above every table
            assert page.locator("main > :nth-child(2)").get_attribute("id") == "pictures"
            picture = page.locator("#pictures svg").first
            table = page.locator("#overall")
            assert picture.bounding_box()["y"] < table.bounding_box()["y"]  # type: ignore[index]
            labels = page.locator("#pictures svg g.row text").all_text_contents()
            assert labels[0] == "1. oracle (agent)" and not any("none/none" in t for t in labels)
            names = page.locator("#overall tbody tr td.name")
            assert names.all_inner_texts() == ["oracle (agent)", "alpha · generate",
                                               "beta · generate", "gamma · generate"]
            page.click("#overall thead th:nth-child(5)")  # mean win rate: ascending
            assert names.all_inner_texts()[0] == "gamma · generate"

            page.click("a.bench")
            page.wait_for_url("**/synth-bench.html")
            # the benchmark page opens on its picture too: one dot and one bar per entry,
            # one shaded band per tie group, the oracle's dashed line
            figure = page.locator("#picture")
            assert figure.bounding_box()["y"] < page.locator(  # type: ignore[index]
                "#entries").bounding_box()["y"]
            assert page.locator("#picture svg circle").count() == 4
            assert page.locator("#picture svg line.ci").count() == 4
            bands = page.locator("#picture svg g.tie-group")
            assert bands.count() == len(set(groups))
            assert [int(g) for g in (bands.nth(i).get_attribute("data-group")
                                     for i in range(bands.count())) if g] == sorted(set(groups))
            assert page.locator("#picture svg g.ref-oracle").count() == 1
            svg_text = " ".join(page.locator("#picture svg text").all_text_contents())
            assert "tie group 1" in svg_text and "oracle 1" in svg_text
            caption = page.locator("#picture figcaption").inner_text()
            assert f"{len(set(groups))} tie group" in caption
            # the table: readable names, each row's tie group, the MDE to the next entry
            rows = page.locator("#entries tbody tr")
            assert page.locator("#entries tbody td.name").first.inner_text().startswith(
                "oracle (agent)")
            assert [int(t) for t in page.locator("#entries tbody td.group")
                    .all_inner_texts()] == groups
            mde = rows.nth(1).locator("td:nth-child(10)").inner_text()
            assert mde == f"{entries[1]['mdd_next']:.3f}"
            assert page.locator("#pairwise td.diag").count() == 4
            errors = page.locator("#entries tbody tr td.err")
            assert errors.all_inner_texts() == ["1"]  # beta's errored sample is shown
            page.click("#entries thead th:nth-child(18)")  # work time per sample, ascending
            assert [t.split(" ·")[0].split(" (")[0] for t in page.locator(
                "#entries tbody td.name").all_inner_texts()] == ["oracle", "beta", "gamma",
                                                                 "alpha"]
            href = page.locator("#entries a.log").first.get_attribute("href")
            response = page.request.get(f"{url}/{href}")
            assert response.ok and b'"samples"' in response.body()  # the log link resolves
            standalone = page.request.get(f"{url}/synth-bench.svg")
            assert standalone.ok and b"tie group" in standalone.body()

            shot = tmp_path / "benchmark.png"
            figure.screenshot(path=str(shot))
            assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
            seen = _colours(shot)
            assert BAND in seen and ORACLE in seen  # the bands and the oracle were drawn
            page.screenshot(path=str(tmp_path / "page.png"), full_page=True)
            assert (tmp_path / "page.png").stat().st_size > 5000
        finally:
            context.close()
    shutil.rmtree(profile, ignore_errors=True)
