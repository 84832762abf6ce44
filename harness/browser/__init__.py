"""Generic browser tool set: a Chromium (Playwright) confined to one origin, per sample.

``BrowserSession`` (no Inspect) drives the page; ``StaticSiteServer`` serves a directory on
127.0.0.1 and a free port; ``browser_tools``/``browser_setup``/``browser_cleanup`` adapt
them to Inspect for any benchmark whose world is a web site; ``browsergym_tools`` is the
BrowserGym-style action space (element ids, Set-of-Marks) of :mod:`harness.browser.gym`.
"""

from harness.browser.server import StaticSiteServer
from harness.browser.session import BrowserConfig, BrowserError, BrowserSession, origin_of
from harness.browser.tools import (
    browser_cleanup,
    browser_setup,
    browser_tools,
    browsergym_tools,
    current_session,
    open_sessions,
)

__all__ = [
    "BrowserConfig",
    "BrowserError",
    "BrowserSession",
    "StaticSiteServer",
    "browser_cleanup",
    "browser_setup",
    "browser_tools",
    "browsergym_tools",
    "current_session",
    "open_sessions",
    "origin_of",
]
