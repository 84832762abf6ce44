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
:func:`browsergym_tools` is the BrowserGym-style alternative (actions by element id on an
accessibility tree with ids, Set-of-Marks screenshots); the classic tools stay.
"""

from __future__ import annotations

import asyncio
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


# ---------------------------------------------------------------------- BrowserGym style
# Actions by element id (bid) with an accessibility-tree observation (and a Set-of-Marks
# screenshot when ``vision``) after every step, named as BrowserGym names them, so agents
# written for BrowserGym/WebArena fit. See :mod:`harness.browser.gym`.


async def _step(
    action: Callable[[BrowserSession], Awaitable[Any]], vision: bool
) -> str | list[Any]:
    """Run one action, then observe; an action error is reported in the observation."""
    from harness.browser import gym

    session = current_session()
    error = ""
    try:
        await action(session)
    except BrowserError as exc:
        error = str(exc)
    try:
        obs = await gym.observe(session, som=vision, error=error)
    except BrowserError as exc:
        raise ToolError(str(exc)) from exc
    if vision and obs.som_screenshot is not None:
        return [ContentText(text=obs.text()), _image(obs.som_screenshot)]
    return obs.text()


def _gym_tools(vision: bool) -> list[Tool]:
    from harness.browser import gym

    @tool(name="noop")
    def noop() -> Tool:
        async def execute() -> str | list[Any]:
            """Do nothing and observe the page (the first observation).

            Returns:
                URL, tabs and the accessibility tree with [bid] element ids.
            """
            return await _step(lambda s: asyncio.sleep(0), vision)

        return execute

    @tool(name="click")
    def click() -> Tool:
        async def execute(bid: str) -> str | list[Any]:
            """Click an element.

            Args:
                bid: The element id shown as [bid] in the accessibility tree.

            Returns:
                The observation after the click.
            """
            return await _step(lambda s: gym.click(s, bid), vision)

        return execute

    @tool(name="fill")
    def fill() -> Tool:
        async def execute(bid: str, value: str) -> str | list[Any]:
            """Fill a text field (replaces its content).

            Args:
                bid: The field's element id.
                value: The text to put in.

            Returns:
                The observation afterwards.
            """
            return await _step(lambda s: gym.fill(s, bid, value), vision)

        return execute

    @tool(name="select_option")
    def select_option() -> Tool:
        async def execute(bid: str, options: str) -> str | list[Any]:
            """Choose an option of a select element.

            Args:
                bid: The select element's id.
                options: The option's value or visible label.

            Returns:
                The observation afterwards.
            """
            return await _step(lambda s: gym.select_option(s, bid, options), vision)

        return execute

    @tool(name="hover")
    def hover() -> Tool:
        async def execute(bid: str) -> str | list[Any]:
            """Move the mouse over an element.

            Args:
                bid: The element id.

            Returns:
                The observation afterwards.
            """
            return await _step(lambda s: gym.hover(s, bid), vision)

        return execute

    @tool(name="scroll")
    def scroll() -> Tool:
        async def execute(delta_x: float, delta_y: float) -> str | list[Any]:
            """Scroll the page by a number of pixels.

            Args:
                delta_x: Horizontal pixels (positive: right).
                delta_y: Vertical pixels (positive: down).

            Returns:
                The observation afterwards.
            """
            return await _step(lambda s: gym.scroll(s, delta_x, delta_y), vision)

        return execute

    @tool(name="goto")
    def goto() -> Tool:
        async def execute(url: str) -> str | list[Any]:
            """Open a URL of the site.

            Args:
                url: A path on the site (e.g. /index.html) or a full URL on the same site.

            Returns:
                The observation of the new page.
            """
            return await _step(lambda s: s.navigate(url), vision)

        return execute

    @tool(name="go_back")
    def go_back() -> Tool:
        async def execute() -> str | list[Any]:
            """Go back to the previous page.

            Returns:
                The observation afterwards.
            """
            return await _step(lambda s: s.back(), vision)

        return execute

    @tool(name="go_forward")
    def go_forward() -> Tool:
        async def execute() -> str | list[Any]:
            """Go forward in history.

            Returns:
                The observation afterwards.
            """
            return await _step(lambda s: s.forward(), vision)

        return execute

    @tool(name="new_tab")
    def new_tab() -> Tool:
        async def execute() -> str | list[Any]:
            """Open a new, empty tab and switch to it.

            Returns:
                The observation of the new tab.
            """
            return await _step(lambda s: s.new_tab(), vision)

        return execute

    @tool(name="tab_focus")
    def tab_focus() -> Tool:
        async def execute(index: int) -> str | list[Any]:
            """Switch to an open tab.

            Args:
                index: The tab's position (0-based) in the observation's tab list.

            Returns:
                The observation of that tab.
            """
            return await _step(lambda s: s.tab_focus(int(index)), vision)

        return execute

    @tool(name="tab_close")
    def tab_close() -> Tool:
        async def execute() -> str | list[Any]:
            """Close the current tab (the last remaining tab becomes active).

            Returns:
                The observation afterwards.
            """
            return await _step(lambda s: s.tab_close(), vision)

        return execute

    return [
        noop(), click(), fill(), select_option(), hover(), scroll(), goto(), go_back(),
        go_forward(), new_tab(), tab_focus(), tab_close(),
    ]


def browsergym_tools(vision: bool = True) -> list[Tool]:
    """The BrowserGym-style tool set: actions by bid; each returns the accessibility tree
    with bids (and, with ``vision``, the Set-of-Marks screenshot as an image)."""
    return _gym_tools(vision)
