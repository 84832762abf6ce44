"""One headless Chromium (Playwright, Debian's binary) confined to a single origin.

Why a session object with no Inspect imports: the same browser drives the Webscape
benchmark, the leaderboard-site tests and anything else that needs a page; the Inspect
tool wrappers in :mod:`harness.browser.tools` are a thin layer on top.

Confinement: every request the page makes (documents, subresources, fetches, and
WebSocket connections) goes through a route guard that lets through only the allowed
origin (scheme, host and port) and aborts everything else, recording it in
``blocked``; Chromium also gets a host resolver rule that maps every hostname except
127.0.0.1 to nothing, and service workers are blocked. Concurrency is bounded per event
loop (``HARNESS_MAX_BROWSERS``, default 4) so 150 samples do not start 150 browsers.

Playwright is the optional ``web`` extra: this module imports it only when a session starts
(or an error needs its type), so listing and every benchmark without a browser work with
the base install; :meth:`BrowserSession.start` without it raises
:class:`~harness.registry.MissingExtraError` with the ``pip install 'harness[web]'`` line.
"""

from __future__ import annotations

import asyncio
import functools
import os
import re
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from harness.registry import require_extra

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Page, Playwright, Route
    from playwright.async_api import Error as PlaywrightError

DEFAULT_EXECUTABLE = "/usr/bin/chromium"
DEFAULT_MAX_BROWSERS = 4


def require_playwright() -> None:
    """Raise :class:`~harness.registry.MissingExtraError` (``pip install 'harness[web]'``)
    when Playwright is not installed."""
    require_extra("web", "the browser (Playwright's Chromium, used by Webscape)")


@functools.cache
def _playwright_error() -> type[PlaywrightError]:
    """Playwright's error class, imported on first need (only a started session raises it;
    an ``except`` clause evaluates this only when an exception reaches it)."""
    from playwright.async_api import Error

    return Error


def chromium_path() -> str:
    """Chromium binary: ``$HARNESS_CHROMIUM`` or Debian's ``/usr/bin/chromium``."""
    return os.environ.get("HARNESS_CHROMIUM", DEFAULT_EXECUTABLE)


def origin_of(url: str) -> str:
    """``scheme://host:port`` of a URL (default ports made explicit)."""
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443, "ws": 80, "wss": 443}.get(parts.scheme, 0)
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
    return f"{scheme}://{(parts.hostname or '').lower()}:{port}"


_LIMITS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
    weakref.WeakKeyDictionary()
)


def _limit() -> asyncio.Semaphore:
    """The running loop's bound on open browsers (one semaphore per event loop)."""
    loop = asyncio.get_running_loop()
    if loop not in _LIMITS:
        _LIMITS[loop] = asyncio.Semaphore(
            int(os.environ.get("HARNESS_MAX_BROWSERS", DEFAULT_MAX_BROWSERS))
        )
    return _LIMITS[loop]


class BrowserError(Exception):
    """A browser action failed in a way the agent should read (bad target, blocked URL)."""


@dataclass
class BrowserConfig:
    """Launch and observation settings."""

    executable_path: str = field(default_factory=chromium_path)
    width: int = 1024
    height: int = 768
    timeout_ms: int = 30_000
    max_text_chars: int = 8_000


class BrowserSession:
    """A headless Chromium page that can only reach ``allowed_origin``."""

    def __init__(self, allowed_origin: str, config: BrowserConfig | None = None) -> None:
        self.allowed = origin_of(allowed_origin)
        self.base = allowed_origin.rstrip("/") + "/"
        self.config = config or BrowserConfig()
        self.blocked: list[str] = []
        self._pw: Playwright | None = None
        self._browser: Browser | None = None
        self._context: BrowserContext | None = None
        self._page: Page | None = None
        self._held = False

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> BrowserSession:
        """Launch Chromium (waits for a free slot under the concurrency bound)."""
        require_playwright()
        from playwright.async_api import async_playwright

        await _limit().acquire()
        self._held = True
        try:
            self._pw = await async_playwright().start()
            self._browser = await self._pw.chromium.launch(
                executable_path=self.config.executable_path,
                headless=True,
                args=[
                    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
                    "--disable-background-networking",
                    "--no-first-run",
                ],
            )
            self._context = await self._browser.new_context(
                viewport={"width": self.config.width, "height": self.config.height},
                service_workers="block",
            )
            self._context.set_default_timeout(self.config.timeout_ms)
            await self._context.route(re.compile(r".*"), self._guard)
            await self._context.route_web_socket(re.compile(r".*"), self._guard_ws)
            self._page = await self._context.new_page()
        except BaseException:
            await self.close()
            raise
        return self

    async def close(self) -> None:
        """Close the browser and the driver (idempotent; never raises)."""
        for closer in (self._context, self._browser):
            if closer is not None:
                try:
                    await closer.close()
                except Exception:  # noqa: BLE001 - closing must not fail the sample
                    pass
        if self._pw is not None:
            try:
                await self._pw.stop()
            except Exception:  # noqa: BLE001
                pass
        self._pw = self._browser = self._context = self._page = None
        if self._held:
            self._held = False
            _limit().release()

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran (or before :meth:`start`)."""
        return self._browser is None

    async def __aenter__(self) -> BrowserSession:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ guard
    def allows(self, url: str) -> bool:
        """Whether ``url`` is on the allowed origin (data: and about:blank are inert)."""
        if url.startswith(("data:", "about:blank")):
            return True
        return origin_of(url) == self.allowed

    async def _guard(self, route: Route) -> None:
        url = route.request.url
        if self.allows(url):
            await route.continue_()
        else:
            self.blocked.append(url)
            await route.abort("blockedbyclient")

    async def _guard_ws(self, ws: Any) -> None:
        if self.allows(ws.url):
            ws.connect_to_server()
        else:
            self.blocked.append(ws.url)
            await ws.close()

    # ------------------------------------------------------------------ actions
    @property
    def page(self) -> Page:
        """The open page (raises when the session is closed)."""
        if self._page is None:
            raise BrowserError("the browser is not running")
        return self._page

    def resolve(self, url: str) -> str:
        """Absolute URL for ``url`` (relative ones against the site root)."""
        return urljoin(self.base, url.strip())

    async def navigate(self, url: str) -> str:
        """Open ``url``; URLs on other origins are refused before any request is made."""
        target = self.resolve(url)
        if not self.allows(target):
            self.blocked.append(target)
            raise BrowserError(f"blocked: {target} is outside {self.allowed}")
        try:
            await self.page.goto(target, wait_until="load")
        except _playwright_error() as exc:
            raise BrowserError(f"could not open {target}: {exc.message.splitlines()[0]}") from exc
        return await self.status()

    async def click(self, target: str) -> str:
        """Click a link or button by its visible name, else by CSS selector."""
        page = self.page
        candidates = [
            page.get_by_role("link", name=target, exact=True),
            page.get_by_role("button", name=target, exact=True),
            page.get_by_role("link", name=target),
            page.get_by_text(target, exact=True),
        ]
        for loc in candidates:
            if await loc.count():
                return await self._click(loc.first)
        try:
            loc = page.locator(target)
            if await loc.count():
                return await self._click(loc.first)
        except _playwright_error():
            pass
        raise BrowserError(f"nothing to click matches {target!r}")

    async def _click(self, loc: Any) -> str:
        try:
            async with self.page.expect_navigation(wait_until="load", timeout=3_000):
                await loc.click()
        except _playwright_error():
            pass  # a click that does not navigate (a tab, a summary) is fine
        return await self.status()

    async def type(self, target: str, text: str, submit: bool = False) -> str:
        """Fill a text field (by label, placeholder or CSS selector); Enter if ``submit``."""
        page = self.page
        for loc in (page.get_by_label(target), page.get_by_placeholder(target)):
            if await loc.count():
                field_ = loc.first
                break
        else:
            try:
                field_ = page.locator(target).first
                if not await page.locator(target).count():
                    raise BrowserError(f"no text field matches {target!r}")
            except _playwright_error() as exc:
                raise BrowserError(f"no text field matches {target!r}") from exc
        await field_.fill(text)
        if submit:
            try:
                async with page.expect_navigation(wait_until="load", timeout=3_000):
                    await field_.press("Enter")
            except _playwright_error():
                pass
        return await self.status()

    async def scroll(self, direction: str = "down", pages: float = 1.0) -> str:
        """Scroll the viewport up or down by ``pages`` screen heights."""
        sign = -1 if direction == "up" else 1
        await self.page.mouse.wheel(0, sign * pages * self.config.height * 0.9)
        await self.page.wait_for_timeout(50)
        return await self.status()

    async def back(self) -> str:
        """Go back in history."""
        await self.page.go_back(wait_until="load")
        return await self.status()

    async def forward(self) -> str:
        """Go forward in history."""
        await self.page.go_forward(wait_until="load")
        return await self.status()

    # ------------------------------------------------------------------ tabs
    def tabs(self) -> list[Page]:
        """The open pages (tabs) of the context, in opening order."""
        return list(self._context.pages) if self._context is not None else []

    async def new_tab(self, url: str | None = None) -> str:
        """Open a new tab (at ``url`` when given) and make it the active one."""
        if self._context is None:
            raise BrowserError("the browser is not running")
        self._page = await self._context.new_page()
        if url:
            return await self.navigate(url)
        return await self.status()

    async def tab_focus(self, index: int) -> str:
        """Make tab ``index`` (0-based, opening order) the active one."""
        tabs = self.tabs()
        if not 0 <= index < len(tabs):
            raise BrowserError(f"no tab {index}: {len(tabs)} open")
        self._page = tabs[index]
        await self._page.bring_to_front()
        return await self.status()

    async def tab_close(self) -> str:
        """Close the active tab; the last remaining one becomes active (a blank one if none)."""
        if self._context is None:
            raise BrowserError("the browser is not running")
        await self.page.close()
        tabs = self.tabs()
        self._page = tabs[-1] if tabs else await self._context.new_page()
        return await self.status()

    async def status(self) -> str:
        """One line: URL, title and scroll position."""
        page = self.page
        pos = await page.evaluate(
            "() => [Math.round(window.scrollY), document.documentElement.scrollHeight]"
        )
        return f"URL: {page.url}\nTitle: {await page.title()}\nScroll: {pos[0]} of {pos[1]} px"

    async def text(self, offset: int = 0) -> str:
        """Visible text of the page (``innerText``), ``max_text_chars`` from ``offset``."""
        body = await self.page.inner_text("body")
        chunk = body[offset : offset + self.config.max_text_chars]
        more = len(body) - offset - len(chunk)
        tail = (
            f"\n[... {more} more characters: use offset={offset + len(chunk)}]" if more > 0 else ""
        )
        return f"{await self.status()}\n\n{chunk}{tail}"

    async def accessibility(self) -> str:
        """The page's accessibility tree (ARIA snapshot: roles, names, CSS-generated text)."""
        snap = await self.page.locator("body").aria_snapshot()
        return f"{await self.status()}\n\n{snap[: self.config.max_text_chars * 2]}"

    async def screenshot(self, full_page: bool = False) -> bytes:
        """PNG of the viewport (or the whole page)."""
        return await self.page.screenshot(type="png", full_page=full_page)
