"""BrowserGym-style interface: bids on the tree, Set-of-Marks, actions by bid, tabs."""

from __future__ import annotations

import asyncio
import io
import re
import shutil
from pathlib import Path

import pytest
from PIL import Image

from harness.browser import BrowserSession, StaticSiteServer, browsergym_tools, gym
from harness.browser.session import chromium_path
from harness.inspect_compat import registry_info_name

has_chromium = pytest.mark.skipif(
    shutil.which(chromium_path()) is None and not Path(chromium_path()).exists(),
    reason="chromium not installed",
)

HOME = """<!doctype html><html><head><title>Home</title><style>
.badge::after { content: "Pets allowed"; } body { margin: 0; font-size: 14px; }
.tall { height: 2000px; }</style></head><body>
<h1>Tiny site</h1><a href="/other.html">Other page</a>
<span class="badge"></span>
<details><summary>More</summary><p>Hidden words</p></details>
<label>Name <input id="q" name="q"></label>
<select id="s"><option value="a">Alpha</option><option value="b">Beta</option></select>
<button onclick="void 0"
 onmouseover="this.textContent='Hovered'">Hover me</button>
<table><tr><th>Mon</th><td>10:00</td></tr></table>
<img src="/x.png" alt="A map">
<div class="tall"></div></body></html>"""
OTHER = "<!doctype html><title>Other</title><h1>Other page</h1><a href='/index.html'>Home</a>"


def _bid(tree: str, role: str, name: str) -> str:
    found = re.search(rf"\[(\d+)\] {role} '{re.escape(name)}'", tree)
    assert found, f"no {role} {name!r} in\n{tree}"
    return found.group(1)


def test_tool_set_has_browsergym_names() -> None:
    names = {registry_info_name(t).split("/")[-1] for t in browsergym_tools(vision=False)}
    assert {"click", "fill", "select_option", "hover", "scroll", "go_back", "goto",
            "new_tab", "tab_focus", "tab_close", "noop"} <= names


async def _episode(root: Path) -> dict[str, object]:
    out: dict[str, object] = {}
    with StaticSiteServer(root) as server:
        async with BrowserSession(server.origin) as session:
            await session.navigate("/index.html")
            obs = await gym.observe(session, som=True)
            tree = obs.axtree
            out["tree"] = tree
            out["som"] = obs.som_screenshot
            out["plain"] = await session.screenshot()
            out["marks"] = obs.marks
            # collapsed content is not in the tree until the summary is clicked
            out["hidden_before"] = "Hidden words" in tree
            await gym.click(session, _bid(tree, "button", "More"))
            out["hidden_after"] = "Hidden words" in (await gym.observe(session)).axtree
            await gym.fill(session, re.search(r"\[(\d+)\] textbox", tree).group(1), "hello")
            await gym.select_option(session, re.search(r"\[(\d+)\] combobox", tree).group(1),
                                    "Beta")
            await gym.hover(session, _bid(tree, "button", "Hover me"))
            after = (await gym.observe(session)).axtree
            out["filled"] = "value='hello'" in after
            out["selected"] = "value='b'" in after
            out["hovered"] = "'Hovered'" in after
            await gym.scroll(session, 0, 500)
            out["scrolled"] = await session.page.evaluate("window.scrollY")
            await gym.click(session, _bid(tree, "link", "Other page"))
            out["after_click"] = session.page.url
            await session.back()
            out["after_back"] = session.page.url
            await session.new_tab("/other.html")
            obs = await gym.observe(session)
            out["tabs"] = (len(obs.open_pages_urls), obs.active_page_index)
            await session.tab_focus(0)
            out["focused"] = session.page.url
            await session.tab_focus(1)
            await session.tab_close()
            out["after_close"] = (len(session.tabs()), session.page.url)
            try:
                await gym.click(session, "99999")
            except Exception as exc:  # noqa: BLE001
                out["bad_bid"] = str(exc)
    return out


@pytest.mark.browser
@has_chromium
def test_observation_and_actions_on_a_tiny_site(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text(HOME)
    (tmp_path / "other.html").write_text(OTHER)
    Image.new("RGB", (40, 20), (200, 10, 10)).save(tmp_path / "x.png")
    out = asyncio.run(_episode(tmp_path))
    tree = str(out["tree"])
    assert re.search(r"\[\d+\] heading 'Tiny site'", tree)
    assert re.search(r"\[\d+\] link 'Other page', url='/other.html'", tree)
    assert "StaticText 'Pets allowed'" in tree  # CSS generated content, as Chromium's tree has
    assert re.search(r"\[\d+\] img 'A map'", tree)  # an image is its alt text, nothing more
    assert re.search(r"\[\d+\] columnheader 'Mon'", tree) and "cell '10:00'" in tree
    assert out["hidden_before"] is False and out["hidden_after"] is True
    assert out["filled"] and out["selected"] and out["hovered"]
    assert int(out["scrolled"]) > 0  # type: ignore[call-overload]
    assert str(out["after_click"]).endswith("/other.html")
    assert str(out["after_back"]).endswith("/index.html")
    assert out["tabs"] == (2, 1) and str(out["focused"]).endswith("/index.html")
    assert out["after_close"][0] == 1  # type: ignore[index]
    assert "no element with bid" in str(out["bad_bid"])
    # Set-of-Marks: the same viewport with red numbered boxes over the interactive elements
    som = Image.open(io.BytesIO(out["som"])).convert("RGB")  # type: ignore[arg-type]
    plain = Image.open(io.BytesIO(out["plain"])).convert("RGB")  # type: ignore[arg-type]
    assert som.size == plain.size and som.tobytes() != plain.tobytes()
    marks = out["marks"]
    assert isinstance(marks, list) and len(marks) >= 5
    link = next(m for m in marks if m["bid"] == _bid(tree, "link", "Other page"))
    assert som.getpixel((int(link["x"]), int(link["y"]) + 2)) == (230, 30, 30)
