"""One typed registry for everything the suite ships: benchmarks, agents, model methods,
editors, scripted policies, interventions, evaluation stacks, model providers, recipes and
plain methods.

Why one: ``harness list``, the study runner and every ``-M method=`` / ``-T editor=`` /
``solver:`` lookup must agree on what exists, and adding a thing must be one module plus one
decorator. The machinery is :mod:`harness.plugins.core`; each plug-in kind's decorator and
interface live in its own module of :mod:`harness.plugins` (the table of kinds is
:data:`harness.plugins.PLUGIN_KINDS`). This module is their one public face: it re-exports
the machinery, and each kind's decorator is imported from its module on first use (so
``import harness.registry`` stays light and no kind's module needs another's)::

    from harness.registry import agent_method, editor, whitebox_method, entries, get
"""

from __future__ import annotations

import importlib
from typing import Any

from harness.plugins import PLUGIN_KINDS
from harness.plugins.core import (
    BROKEN,
    EXTRAS,
    KINDS,
    Entry,
    Kind,
    MissingExtraError,
    RegistryError,
    broken_modules,
    declare,
    entries,
    extra_available,
    find,
    folder_of,
    get,
    import_modules,
    load_plugins,
    names,
    register,
    registered,
    require_extra,
    resolve_target,
    unregister,
)

DECORATORS: dict[str, str] = {
    "agent_method": "harness.plugins.agent",
    "benchmark": "harness.plugins.benchmark",
    "whitebox_method": "harness.plugins.whitebox_method",
    "editor": "harness.plugins.editor",
    "model_wrapper": "harness.plugins.model",
    "scripted_policy": "harness.plugins.policy",
    "intervention": "harness.plugins.intervention",
    "stack_runner": "harness.plugins.stack",
    "recipe": "harness.plugins.recipe",
    "plain_method": "harness.plugins.plain_method",
}
"""Each kind's decorator -> the plug-in module that holds it."""

__all__ = [
    "BROKEN", "DECORATORS", "EXTRAS", "KINDS", "PLUGIN_KINDS", "Entry", "Kind",
    "MissingExtraError", "RegistryError", "broken_modules", "declare", "entries",
    "extra_available", "find", "folder_of", "get", "import_modules", "load_plugins", "names",
    "register", "registered", "require_extra", "resolve_target", "unregister",
    *DECORATORS,
]


def __getattr__(name: str) -> Any:
    """A kind's decorator, imported from its plug-in module on first use."""
    if name in DECORATORS:
        return getattr(importlib.import_module(DECORATORS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
