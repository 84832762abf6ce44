"""The ``policy`` plug-in kind: a scripted model's rule, served as ``scripted/<name>``.

A policy looks at the conversation and the offered tools and decides what the "model" says
next (an oracle, a random agent, a malformed-output probe). The provider that serves them is
:mod:`harness.models.scripted`; a benchmark's policies register here with
:func:`scripted_policy`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput
from inspect_ai.tool import ToolCall, ToolInfo

from harness.plugins.core import find, names, register

__all__ = ["Policy", "PolicyResult", "get_policy", "list_policies", "scripted_policy"]

PolicyResult: TypeAlias = ModelOutput | str | ToolCall | list[ToolCall]
"""What a policy may return: full output, plain text, or one/many tool calls."""

Policy: TypeAlias = Callable[
    [list[ChatMessage], list[ToolInfo], GenerateConfig, dict[str, Any]],
    PolicyResult | Awaitable[PolicyResult],
]
"""A policy: ``(input, tools, config, args) -> PolicyResult`` (sync or async)."""

def scripted_policy(name: str) -> Callable[[Policy], Policy]:
    """Register ``fn`` as the policy served by ``scripted/<name>``.

    The decorated function keeps working as a plain function (handy in unit tests).
    Policies live in the suite's registry (:mod:`harness.registry`, kind ``policy``).
    Registering a name again from the same module replaces it, so a module reloaded by a
    test runner does not fail.

    Args:
        name: Policy name, i.e. the model name after ``scripted/``.
    """
    if not name or "/" in name:
        raise ValueError(f"invalid scripted policy name {name!r}")

    def decorate(fn: Policy) -> Policy:
        register("policy", name, fn)
        return fn

    return decorate


def list_policies() -> list[str]:
    """Names of all registered policies, sorted (for error messages and `harness list`)."""
    return names("policy")


def get_policy(name: str) -> Policy:
    """Look up a registered policy, with the known names in the error if it is missing."""
    entry = find("policy", name)
    if entry is not None:
        policy: Policy = entry.obj
        return policy
    raise ValueError(
        f"unknown scripted policy {name!r}; known: {', '.join(list_policies())} "
        "(a benchmark's policy may need -M policy_module=<module that registers it>)"
    )
