"""A BrowserGym-style observation and action space over a :class:`BrowserSession`.

Why: agents written for BrowserGym/WebArena act on element ids ("bid") that appear in an
accessibility-tree observation and on a Set-of-Marks screenshot, with actions such as
``click(bid)``, ``fill(bid, text)``, ``select_option(bid, value)``, ``hover(bid)``,
``scroll(dx, dy)``, ``go_back()``, ``goto(url)`` and tab actions. This module gives the
same interface on this suite's confined Chromium (no Inspect imports; the tools in
:mod:`harness.browser.tools` wrap it).

Observation: every rendered element gets a ``bid`` attribute (numbered in document order,
stable for the life of the document); the tree lists elements with a role as
``[bid] role 'name'`` lines indented by depth, with ``StaticText`` lines for loose text.
Names and text include CSS generated content (``::before``/``::after``), as Chromium's
accessibility tree does, and exclude what is not rendered (collapsed ``<details>``
content). Images appear with their alt text only. The Set-of-Marks screenshot draws a
numbered box over every interactive element in the viewport. The tree is computed in the
page by a script of our own (not CDP's AX tree), which keeps it deterministic and fast.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any

from harness.browser.session import BrowserError, BrowserSession, _playwright_error

BID = "bid"
MAX_TREE_CHARS = 60_000

_MARK_JS = r"""
(limit) => {
  const ROLE = {A: 'link', BUTTON: 'button', SELECT: 'combobox', TEXTAREA: 'textbox',
    H1: 'heading', H2: 'heading', H3: 'heading', H4: 'heading', H5: 'heading', H6: 'heading',
    TABLE: 'table', TR: 'row', TH: 'columnheader', TD: 'cell', UL: 'list', OL: 'list',
    LI: 'listitem', IMG: 'img', DL: 'list', DT: 'term', DD: 'definition', P: 'paragraph',
    NAV: 'navigation', MAIN: 'main', HEADER: 'banner', FOOTER: 'contentinfo',
    FIGURE: 'figure', FIGCAPTION: 'caption', SUMMARY: 'button', DETAILS: 'group',
    FORM: 'form', LABEL: 'LabelText', OPTION: 'option'};
  const FROM_CONTENT = new Set(['link', 'button', 'heading', 'cell', 'columnheader', 'option',
    'term', 'caption', 'LabelText', 'definition']);
  const INTERACTIVE = new Set(['A', 'BUTTON', 'INPUT', 'SELECT', 'TEXTAREA', 'SUMMARY']);
  const SKIP = new Set(['SCRIPT', 'STYLE', 'HEAD', 'TEMPLATE', 'NOSCRIPT']);
  let next = window.__bidNext || 0;
  const lines = [], marks = [];
  const q = (s) => "'" + s.replace(/\\/g, '\\\\').replace(/'/g, "\\'") + "'";
  const pseudo = (el, which) => {
    const c = getComputedStyle(el, which).content;
    if (!c || c === 'none' || c === 'normal') return '';
    const m = c.match(/^"(.*)"$/s);
    return m ? m[1] : '';
  };
  // checkVisibility also hides what a closed <details> holds (content-visibility: hidden)
  const shown = (el) => (el.checkVisibility
    ? el.checkVisibility({visibilityProperty: true})
    : el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden');
  const text = (el) => {
    let out = pseudo(el, '::before');
    for (const n of el.childNodes) {
      if (n.nodeType === 3) out += n.data;
      else if (n.nodeType === 1 && !SKIP.has(n.tagName) && shown(n)) {
        out += n.tagName === 'IMG' ? '' : ' ' + text(n) + ' ';
      }
    }
    return (out + pseudo(el, '::after')).replace(/\s+/g, ' ').trim();
  };
  const roleOf = (el) => {
    if (el.getAttribute('role')) return el.getAttribute('role');
    if (el.tagName === 'A') return el.hasAttribute('href') ? 'link' : '';
    if (el.tagName === 'INPUT') {
      const t = (el.type || 'text').toLowerCase();
      return {checkbox: 'checkbox', radio: 'radio', submit: 'button', button: 'button',
              hidden: ''}[t] ?? 'textbox';
    }
    return ROLE[el.tagName] || '';
  };
  const emit = (depth, s) => { lines.push('\t'.repeat(depth) + s); };
  const walk = (el, depth, onlyInteractive) => {
    if (SKIP.has(el.tagName) || !shown(el)) return;
    if (!el.hasAttribute('bid')) el.setAttribute('bid', String(next++));
    const bid = el.getAttribute('bid');
    const role = roleOf(el);
    const interactive = INTERACTIVE.has(el.tagName) || el.hasAttribute('onclick');
    if (interactive) {
      const r = el.getBoundingClientRect();
      if (r.bottom > 0 && r.right > 0 && r.top < innerHeight && r.left < innerWidth &&
          r.width > 0 && r.height > 0) {
        marks.push({bid, x: r.left, y: r.top, w: r.width, h: r.height});
      }
    }
    let childDepth = depth;
    if (role && (!onlyInteractive || interactive)) {
      const label = el.getAttribute('aria-label') || (el.tagName === 'IMG' ? el.alt || '' : '');
      const name = label || (FROM_CONTENT.has(role) ? text(el) : '');
      let props = '';
      if (role === 'link') props += ', url=' + q(el.getAttribute('href') || '');
      if (el.tagName === 'SUMMARY') {
        props += ', expanded=' + (el.parentElement.open ? 'True' : 'False');
      }
      if (['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName)) {
        props += ', value=' + q(el.value || '');
      }
      if (el.tagName === 'INPUT' && el.placeholder) props += ', placeholder=' + q(el.placeholder);
      emit(depth, '[' + bid + '] ' + role + (name ? ' ' + q(name) : '') + props);
      childDepth = depth + 1;
      if (FROM_CONTENT.has(role) || role === 'img') onlyInteractive = true;
    }
    if (!onlyInteractive) {
      const before = pseudo(el, '::before');
      if (before.trim()) emit(childDepth, 'StaticText ' + q(before.trim()));
    }
    for (const n of el.childNodes) {
      if (n.nodeType === 3) {
        const t = n.data.replace(/\s+/g, ' ').trim();
        if (t && !onlyInteractive) emit(childDepth, 'StaticText ' + q(t));
      } else if (n.nodeType === 1) {
        walk(n, childDepth, onlyInteractive);
      }
    }
    if (!onlyInteractive) {
      const after = pseudo(el, '::after');
      if (after.trim()) emit(childDepth, 'StaticText ' + q(after.trim()));
    }
  };
  walk(document.body, 0, false);
  window.__bidNext = next;
  let tree = lines.join('\n');
  if (tree.length > limit) tree = tree.slice(0, limit) + '\n[... tree truncated]';
  return {tree, marks};
}
"""


@dataclass
class Observation:
    """What the agent sees after each step (BrowserGym's names where they exist)."""

    url: str
    title: str
    axtree: str
    open_pages_urls: list[str]
    active_page_index: int
    last_action_error: str = ""
    marks: list[dict[str, Any]] = field(default_factory=list)
    som_screenshot: bytes | None = None

    def text(self) -> str:
        """The observation as one text block for a model."""
        tabs = ", ".join(
            f"[{i}]{'*' if i == self.active_page_index else ''} {u}"
            for i, u in enumerate(self.open_pages_urls)
        )
        error = f"\nLast action error: {self.last_action_error}" if self.last_action_error else ""
        return (
            f"URL: {self.url}\nTitle: {self.title}\nTabs: {tabs}{error}\n\n"
            f"# Accessibility tree (act on [bid]s)\n{self.axtree}"
        )


async def observe(session: BrowserSession, som: bool = False, error: str = "") -> Observation:
    """Mark every element with a bid and read the tree (and the Set-of-Marks screenshot)."""
    page = session.page
    try:
        found = await page.evaluate(_MARK_JS, MAX_TREE_CHARS)
    except _playwright_error() as exc:
        raise BrowserError(f"could not read the page: {exc.message.splitlines()[0]}") from exc
    pages = session.tabs()
    obs = Observation(
        url=page.url,
        title=await page.title(),
        axtree=found["tree"],
        open_pages_urls=[p.url for p in pages],
        active_page_index=pages.index(page) if page in pages else 0,
        last_action_error=error,
        marks=found["marks"],
    )
    if som:
        obs.som_screenshot = set_of_marks(await session.screenshot(), obs.marks)
    return obs


def set_of_marks(png: bytes, marks: list[dict[str, Any]]) -> bytes:
    """The screenshot with a numbered box over every interactive element (Set-of-Marks)."""
    from PIL import Image, ImageDraw, ImageFont

    img = Image.open(io.BytesIO(png)).convert("RGB")
    draw = ImageDraw.Draw(img)
    font = ImageFont.load_default()
    for m in marks:
        x0, y0 = int(m["x"]), int(m["y"])
        x1, y1 = int(m["x"] + m["w"]), int(m["y"] + m["h"])
        draw.rectangle((x0, y0, x1, y1), outline=(230, 30, 30), width=2)
        label = str(m["bid"])
        tw = 6 * len(label) + 4
        ly = max(0, y0 - 12)
        draw.rectangle((x0, ly, x0 + tw, ly + 12), fill=(230, 30, 30))
        draw.text((x0 + 2, ly), label, fill=(255, 255, 255), font=font)
    out = io.BytesIO()
    img.save(out, format="PNG", compress_level=3)
    return out.getvalue()


def _element(session: BrowserSession, bid: str) -> Any:
    return session.page.locator(f'[{BID}="{str(bid).strip()}"]')


async def _on(session: BrowserSession, bid: str) -> Any:
    loc = _element(session, bid)
    if not await loc.count():
        raise BrowserError(f"no element with bid {bid!r} on this page (observe again)")
    return loc.first


async def click(session: BrowserSession, bid: str) -> None:
    """Click the element ``bid`` (waits briefly for a navigation it starts)."""
    loc = await _on(session, bid)
    href = await loc.get_attribute("href")
    if href and not session.allows(session.resolve(href)):
        session.blocked.append(session.resolve(href))
        raise BrowserError(f"blocked: {href} is outside {session.allowed}")
    tag = await loc.evaluate("e => e.tagName")
    if href or tag in ("BUTTON", "INPUT"):  # may navigate: wait for it
        await session._click(loc)  # noqa: SLF001 - the session's own click-and-wait
        return
    try:
        await loc.click()
    except _playwright_error() as exc:
        raise BrowserError(f"cannot click {bid}: {exc.message.splitlines()[0]}") from exc


async def fill(session: BrowserSession, bid: str, value: str) -> None:
    """Replace the text of the field ``bid`` with ``value``."""
    try:
        await (await _on(session, bid)).fill(value)
    except _playwright_error() as exc:
        raise BrowserError(f"cannot fill {bid}: {exc.message.splitlines()[0]}") from exc


async def select_option(session: BrowserSession, bid: str, value: str) -> None:
    """Choose ``value`` (value or label) in the select ``bid``."""
    loc = await _on(session, bid)
    try:
        try:
            await loc.select_option(value=value)
        except _playwright_error():
            await loc.select_option(label=value)
    except _playwright_error() as exc:
        reason = exc.message.splitlines()[0]
        raise BrowserError(f"cannot select {value!r} in {bid}: {reason}") from exc


async def hover(session: BrowserSession, bid: str) -> None:
    """Move the mouse over the element ``bid``."""
    try:
        await (await _on(session, bid)).hover()
    except _playwright_error() as exc:
        raise BrowserError(f"cannot hover {bid}: {exc.message.splitlines()[0]}") from exc


async def scroll(session: BrowserSession, delta_x: float, delta_y: float) -> None:
    """Scroll the viewport by (``delta_x``, ``delta_y``) pixels."""
    await session.page.mouse.wheel(delta_x, delta_y)
    await session.page.wait_for_timeout(50)
