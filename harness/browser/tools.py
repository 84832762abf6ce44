"""Inspect tools over a per-sample :class:`BrowserSession`, and its setup/cleanup.

How a sample gets its browser: a setup solver (:func:`browser_setup`) starts whatever
serves the site (a callable that returns the origin and a closer), launches a session
confined to that origin and records the sample's key in the sample store; the tools look
the session up through that key. :func:`browser_cleanup` (pass it as ``Task(cleanup=...)``)
closes the browser and the server when the sample ends, whether it succeeded or not.
Only a string key goes into the store, so the log stays serialisable.

Tool sets: ``vision=True`` gives screenshots as images (``browser_screenshot``) and
action results as status lines; ``vision=False`` gives the page's visible text and its
accessibility tree instead. Both share navigate/click/type/scroll/back.
"""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from typing import Any

from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ContentImage, ContentText, Tool, ToolError, tool
from inspect_ai.util import store

from harness.browser.session import (
    BrowserConfig,
    BrowserError,
    BrowserSession,
    require_playwright,
)

STORE_KEY = "browser:session"
Closer = Callable[[], Awaitable[None]]
SiteStarter = Callable[[TaskState], Awaitable[tuple[str, Closer]]]

_SESSIONS: dict[str, BrowserSession] = {}
_CLOSERS: dict[str, list[Closer]] = {}


def current_session() -> BrowserSession:
    """The calling sample's browser (ToolError when the sample has none)."""
    key = store().get(STORE_KEY)
    session = _SESSIONS.get(key) if key else None
    if session is None or session.closed:
        raise ToolError("no browser is open for this sample")
    return session


def open_sessions() -> int:
    """How many sample browsers are open in this process (tests check it drops to 0)."""
    return len(_SESSIONS)


@solver
def browser_setup(
    start_site: SiteStarter, start_path: str = "/", config: BrowserConfig | None = None
) -> Solver:
    """Start the sample's site and a browser confined to it, opened at ``start_path``.

    Args:
        start_site: ``async (state) -> (origin, closer)``: starts the site for this sample.
        start_path: First page to open.
        config: Browser settings (viewport, timeouts, Chromium path).

    Raises:
        harness.registry.MissingExtraError: Playwright (the ``web`` extra) is not installed;
            raised when the task is built, so a run says what to install before any sample.
    """
    require_playwright()

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        key = state.uuid
        closers = _CLOSERS.setdefault(key, [])
        origin, stop_site = await start_site(state)
        closers.append(stop_site)
        session = BrowserSession(origin, config)
        _SESSIONS[key] = session
        closers.insert(0, session.close)
        await session.start()
        state.store.set(STORE_KEY, key)
        state.metadata["site_origin"] = origin
        await session.navigate(start_path)
        return state

    return solve


async def browser_cleanup(state: TaskState) -> None:
    """Close the sample's browser, then its site (for ``Task(cleanup=...)``)."""
    key = state.uuid
    session = _SESSIONS.pop(key, None)
    if session is not None:
        state.metadata["blocked_requests"] = list(session.blocked)
    for closer in _CLOSERS.pop(key, []):
        try:
            await closer()
        except Exception:  # noqa: BLE001 - one failing closer must not skip the rest
            pass


async def _act(action: Callable[[BrowserSession], Awaitable[str]]) -> str:
    session = current_session()
    try:
        return await action(session)
    except BrowserError as exc:
        raise ToolError(str(exc)) from exc


def _image(png: bytes) -> ContentImage:
    return ContentImage(image="data:image/png;base64," + base64.b64encode(png).decode())


@tool
def browser_navigate() -> Tool:
    async def execute(url: str) -> str:
        """Open a page of the site.

        Args:
            url: A path on the site (e.g. /index.html) or a full URL on the same site.

        Returns:
            The new URL, title and scroll position.
        """
        return await _act(lambda s: s.navigate(url))

    return execute


@tool
def browser_click() -> Tool:
    async def execute(target: str) -> str:
        """Click a link or button by its visible text (or a CSS selector).

        Args:
            target: Link/button text as shown on the page, or a CSS selector.

        Returns:
            The URL, title and scroll position after the click.
        """
        return await _act(lambda s: s.click(target))

    return execute


@tool
def browser_type() -> Tool:
    async def execute(field: str, text: str, submit: bool = True) -> str:
        """Type into a text field, optionally pressing Enter.

        Args:
            field: The field's label or placeholder (or a CSS selector).
            text: Text to type (replaces the field's content).
            submit: Press Enter afterwards.

        Returns:
            The URL, title and scroll position afterwards.
        """
        return await _act(lambda s: s.type(field, text, submit))

    return execute


@tool
def browser_scroll() -> Tool:
    async def execute(direction: str = "down", pages: float = 1.0) -> str:
        """Scroll the page.

        Args:
            direction: "down" or "up".
            pages: How many screen heights to scroll.

        Returns:
            The scroll position afterwards.
        """
        return await _act(lambda s: s.scroll(direction, pages))

    return execute


@tool
def browser_back() -> Tool:
    async def execute() -> str:
        """Go back to the previous page.

        Returns:
            The URL and title afterwards.
        """
        return await _act(lambda s: s.back())

    return execute


@tool
def browser_read_text() -> Tool:
    async def execute(offset: int = 0) -> str:
        """Read the page's visible text.

        Args:
            offset: Character offset to continue a long page from.

        Returns:
            URL, title and the visible text (collapsed sections are not visible).
        """
        return await _act(lambda s: s.text(offset))

    return execute


@tool
def browser_accessibility_tree() -> Tool:
    async def execute() -> str:
        """Read the page's accessibility tree (roles, names, states).

        Returns:
            The ARIA snapshot of the page body.
        """
        return await _act(lambda s: s.accessibility())

    return execute


@tool
def browser_screenshot() -> Tool:
    async def execute(full_page: bool = False) -> list[Any]:
        """Take a screenshot of the page.

        Args:
            full_page: Capture the whole page instead of the visible viewport.

        Returns:
            The screenshot image and the page status.
        """
        session = current_session()
        try:
            png = await session.screenshot(full_page)
            status = await session.status()
        except BrowserError as exc:
            raise ToolError(str(exc)) from exc
        return [ContentText(text=status), _image(png)]

    return execute


def browser_tools(vision: bool = True) -> list[Tool]:
    """The browser tool set: screenshots (``vision``) or text and accessibility tree."""
    common = [browser_navigate(), browser_click(), browser_type(), browser_scroll(), browser_back()]
    if vision:
        return [*common, browser_screenshot()]
    return [*common, browser_read_text(), browser_accessibility_tree()]
