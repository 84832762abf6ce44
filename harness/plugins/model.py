"""The ``model`` plug-in kind: a model wrapper served as an Inspect provider.

A model wrapper (MVR-cache around any provider, say) is an Inspect ``ModelAPI`` registered
with Inspect's ``@modelapi`` (so ``--model NAME/...`` reaches it) and listed in the suite's
registry with :func:`model_wrapper`, so ``harness list`` and the studies know it and what
extra it needs. White-box decode-loop methods are the ``whitebox_method`` kind instead.
"""

from __future__ import annotations

from typing import Any

from harness.plugins.core import Entry, register

__all__ = ["model_wrapper"]


def model_wrapper(name: str, obj: Any, *, api: str, summary: str | None = None,
                  extra: str | None = None) -> Entry:
    """List the provider ``obj`` as the model wrapper ``name``; ``api`` is the model
    string a user types (``mvrcache/<provider>/<model>``)."""
    return register("model", name, obj, summary=summary, extra=extra, api=api)
