"""``@plain_method``: a non-LLM method (an estimator, a forecaster, a graph filter) that a
method task (:mod:`harness.method_tasks`) runs as plain Python.

Kept apart from the Inspect adapter so that registering and looking a method up imports
only the registry: the sandbox worker (:mod:`harness.method_worker`) imports a method's
module without importing Inspect. A method is ``fn(inputs, config, seed) -> outputs``; it
sees only its inputs and imports no benchmark or environment::

    @plain_method("tpg", family="markov_ab")
    def tpg(inputs, config, seed): ...
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from harness.plugins.core import Entry, RegistryError, entries, register

__all__ = ["ROLES", "MethodFn", "method_names", "plain_method", "resolve_method"]

ROLES = ("method", "baseline", "reference")
ALIASES = {"paper": "method", "baseline": "baseline"}
"""``-T method=paper`` / ``-T method=baseline`` name a family's method by its role, so one
study factor (``role``) spans method tasks whose methods have different names."""

F = TypeVar("F", bound=Callable[..., Any])
MethodFn = Callable[[Mapping[str, Any], Mapping[str, Any], int], Mapping[str, Any]]
"""A plain method: ``(inputs, config, seed) -> outputs`` (numbers, arrays, lists)."""


def plain_method(
    name: str, *, family: str, summary: str | None = None, extra: str | None = None,
    role: str = "method",
) -> Callable[[F], F]:
    """Register ``fn(inputs, config, seed) -> outputs`` as plain method ``name``.

    Args:
        name: The level name (``-T method=NAME``, a study's ``method`` factor).
        family: The problem it solves (the method task's ``family``): a method task lists
            and accepts only the methods of its own family.
        summary: One line for ``harness list`` (default: the docstring's first line).
        extra: The optional extra it needs (``cpu`` for torch), if any.
        role: ``method`` (the paper's method), ``baseline`` (what the paper beats; one per
            family) or ``reference`` (another yardstick, e.g. an exact but slow method).
    """
    if role not in ROLES:
        raise RegistryError(f"plain method {name!r}: role must be one of {', '.join(ROLES)}")

    def decorate(fn: F) -> F:
        register("plain_method", name, fn, summary=summary, extra=extra, family=family,
                 role=role)
        return fn

    return decorate


def method_names(family: str) -> list[str]:
    """The plain methods registered for ``family``, sorted."""
    return [e.name for e in entries("plain_method") if e.meta.get("family") == family]


def resolve_method(family: str, name: str) -> Entry:
    """The plain method ``name`` of ``family`` (or its ``paper`` / ``baseline`` by role); an
    unknown name lists the family's methods."""
    found = entries("plain_method")
    for entry in found:
        if entry.name == name and entry.meta.get("family") == family:
            return entry
    if name in ALIASES:
        for entry in found:
            if entry.meta.get("family") == family and entry.meta.get("role") == ALIASES[name]:
                return entry
    known = ", ".join(method_names(family)) or "none"
    raise RegistryError(f"unknown {family} method {name!r}; registered: {known}")
