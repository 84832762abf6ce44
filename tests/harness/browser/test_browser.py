"""The generic browser tool set: real Chromium, real pages, origin confinement, cleanup."""

from __future__ import annotations

import asyncio
import io
import shutil
from pathlib import Path

import pytest
from PIL import Image, ImageStat

from harness.browser import BrowserConfig, BrowserError, BrowserSession, StaticSiteServer
from harness.browser.session import chromium_path, origin_of

browser = pytest.mark.skipif(
    shutil.which(chromium_path()) is None and not Path(chromium_path()).exists(),
    reason="chromium not installed",
)

PAGE = """<!doctype html><html><head><title>{title}</title>
<style>body {{ margin: 0; background: {color}; }} .c::after {{ content: "generated"; }}</style>
</head><body><h1>{title}</h1><p>Visible words.</p><span class="c"></span>
<a href="/{other}.html">go {other}</a>
<label>Search <input id="q" name="q"></label>
<form onsubmit="location.href='/'+this.q.value+'.html';return false;"><input name="q"
 placeholder="page name"></form></body></html>"""


@pytest.fixture()
def site(tmp_path: Path) -> Path:
    (tmp_path / "red.html").write_text(PAGE.format(title="Red page", color="#dd2222", other="blue"))
    (tmp_path / "blue.html").write_text(
        PAGE.format(title="Blue page", color="#2222dd", other="red")
    )
    return tmp_path


def test_origin_of_normalises_default_ports() -> None:
    assert origin_of("http://127.0.0.1/x") == "http://127.0.0.1:80"
    assert origin_of("ws://127.0.0.1:81/x") == origin_of("http://127.0.0.1:81/y")
    assert origin_of("http://127.0.0.1:81/") != origin_of("http://127.0.0.1:82/")


def test_static_server_serves_and_releases_its_port(site: Path) -> None:
    import urllib.error
    import urllib.request

    server = StaticSiteServer(site).start()
    url = f"{server.origin}/red.html"
    assert b"Red page" in urllib.request.urlopen(url, timeout=5).read()
    assert server.requests == ["/red.html"]
    server.stop()
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url, timeout=2)


async def _screens(site: Path) -> tuple[bytes, bytes, bytes]:
    with StaticSiteServer(site) as server:
        async with BrowserSession(server.origin) as session:
            await session.navigate("/red.html")
            red = await session.screenshot()
            red_again = await session.screenshot()
            await session.click("go blue")
            blue = await session.screenshot()
    return red, red_again, blue


@pytest.mark.browser
@browser
def test_screenshot_is_a_real_image_of_the_page(site: Path) -> None:
    red, red_again, blue = asyncio.run(_screens(site))
    images = [Image.open(io.BytesIO(b)).convert("RGB") for b in (red, red_again, blue)]
    cfg = BrowserConfig()
    for img in images:
        assert img.size == (cfg.width, cfg.height)
        assert len(img.getcolors(maxcolors=1 << 16) or []) > 2  # not blank: text on a fill
    # the page's own colour fills the background of its screenshot
    r, g, b = ImageStat.Stat(images[0]).median
    assert r > 150 and g < 100 and b < 100
    r, g, b = ImageStat.Stat(images[2]).median
    assert b > 150 and r < 100
    assert red == red_again and red != blue


async def _until_blocked(session: BrowserSession, suffixes: tuple[str, ...],
                         limit_s: float = 30.0) -> None:
    """Wait until the page's sub-requests ending in ``suffixes`` have reached the route
    handler (or ``limit_s`` passes: the assertions then name the missing one). A condition,
    not a fixed pause, so a loaded machine (.ci/test's parallel phase) only makes it slower."""
    deadline = asyncio.get_running_loop().time() + limit_s
    while asyncio.get_running_loop().time() < deadline:
        if all(any(u.endswith(s) for u in session.blocked) for s in suffixes):
            return
        await session.page.wait_for_timeout(50)


async def _blocked(site: Path, other: Path) -> tuple[list[str], list[str], list[str], str]:
    with StaticSiteServer(other) as outside, StaticSiteServer(site) as server:
        probe = f"""<!doctype html><title>probe</title><body>
<link rel="stylesheet" href="{outside.origin}/x.css">
<img src="{outside.origin}/pixel.png"><img src="/red.html">
<iframe src="{outside.origin}/frame.html"></iframe>
<script>
fetch("{outside.origin}/fetch").catch(() => {{}});
try {{ new WebSocket("ws://127.0.0.1:{outside.port}/ws"); }} catch (e) {{}}
document.title = "probe done";
</script></body>"""
        (site / "probe.html").write_text(probe)
        async with BrowserSession(server.origin) as session:
            await session.navigate("/probe.html")
            await _until_blocked(session, ("/x.css", "/pixel.png", "/frame.html", "/fetch"))
            with pytest.raises(BrowserError):
                await session.navigate(f"{outside.origin}/direct.html")
            with pytest.raises(BrowserError):
                await session.navigate("http://example.invalid/")
            title = await session.page.title()
            blocked = list(session.blocked)
        return list(outside.requests), list(server.requests), blocked, title


@pytest.mark.browser
@browser
def test_requests_to_any_other_origin_are_blocked(site: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "pixel.png").write_bytes(b"")
    outside_log, inside_log, blocked, title = asyncio.run(_blocked(site, other))
    assert outside_log == []  # the other loopback port never saw a request
    assert "/probe.html" in inside_log and "/red.html" in inside_log  # same origin works
    assert title == "probe done"
    for suffix in ("/x.css", "/pixel.png", "/frame.html", "/fetch", "/direct.html"):
        assert any(u.endswith(suffix) for u in blocked), suffix


async def _tools(site: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    with StaticSiteServer(site) as server:
        session = BrowserSession(server.origin)
        await session.start()
        try:
            out["nav"] = await session.navigate("red.html")
            out["text"] = await session.text()
            out["tree"] = await session.accessibility()
            out["type"] = await session.type("page name", "blue", submit=True)
            out["back"] = await session.back()
            out["scroll"] = await session.scroll("down")
            with pytest.raises(BrowserError):
                await session.click("no such link anywhere")
        finally:
            await session.close()
        out["closed"] = str(session.closed)
        with pytest.raises(BrowserError):
            await session.navigate("/red.html")
        await session.close()  # idempotent
    return out


@pytest.mark.browser
@browser
def test_actions_text_tree_and_close(site: Path) -> None:
    out = asyncio.run(_tools(site))
    assert "Title: Red page" in out["nav"]
    assert "Visible words." in out["text"] and "generated" not in out["text"]
    assert "generated" in out["tree"]  # CSS-generated text reaches the accessibility tree
    assert "Title: Blue page" in out["type"]
    assert "Title: Red page" in out["back"]
    assert "Scroll:" in out["scroll"]
    assert out["closed"] == "True"
