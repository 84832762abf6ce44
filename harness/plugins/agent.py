"""The ``agent`` plug-in kind: an Inspect solver or agent factory, by name.

A study's ``solver: NAME``, ``harness list`` and ``--solver`` lookups resolve agents here.
The interface is Inspect's own (a ``Solver`` or ``Agent`` factory); nothing else is asked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from harness.plugins.core import registered

__all__ = ["agent_method"]

T = TypeVar("T")


def agent_method(
    name: str, *, summary: str | None = None, extra: str | None = None
) -> Callable[[T], T]:
    """Register an Inspect solver or agent factory as the agent ``name`` (a study's
    ``solver: NAME`` and ``harness list`` resolve it here)."""
    return registered("agent", name, summary=summary, extra=extra)
