"""The methods the suite ships, by kind: one line each.

A method is an agent (an Inspect solver/agent factory), a model wrapper (a model API), an
editor (knowledge editing) or a training recipe. Entries map a public name to
``"module:object"`` so listing methods never imports them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MethodEntry:
    """One shipped method: its kind, where it lives, and its status."""

    name: str
    kind: str  # "agent" | "model" | "editor" | "recipe"
    target: str  # "module:object"
    status: str
    summary: str


METHODS: tuple[MethodEntry, ...] = (
    MethodEntry("react", "agent", "inspect_ai.agent:react", "available",
                "Inspect's ReAct tool loop with submit (the default agent)"),
)
