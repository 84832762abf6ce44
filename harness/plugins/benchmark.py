"""``@benchmark``: a benchmark's task, registered in the suite and as ``harness/<name>``.

Inspect names a registered object after the top-level package its function lives in, so a
task defined in ``benchmarks/arithmetic/arithmetic.py`` is ``benchmarks/arithmetic``. The
installed suite promises ``inspect eval harness/<name>``; the decorator re-registers the
benchmark's task function (same signature, same docstring, so ``-T`` args and ``inspect
list`` keep working) with ``harness`` as its package, and records the benchmark in
:mod:`harness.registry` with its folder (where its ``eval.yaml`` lives). Adding a benchmark
is its task file with one more decorator line::

    @benchmark("arithmetic")
    @task
    def arithmetic(...) -> Task: ...

and one import line in ``benchmarks/_registry.py``.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from inspect_ai import task

from harness.plugins.core import folder_of, register, require_extra

F = TypeVar("F", bound=Callable[..., Any])


def _module_summary(fn: Callable[..., Any]) -> str:
    module = sys.modules.get(fn.__module__)
    doc = ((module.__doc__ if module else None) or "").strip().splitlines()
    return doc[0] if doc else ""


def _package_path(folder: Path) -> str:
    """``benchmarks/probes`` for a folder inside the ``benchmarks`` package: the path from the
    first folder above it that is not a package (what ``inspect eval`` takes from the repo
    root). Computed from files, because Inspect may load a task file under another name."""
    root = folder
    while (root / "__init__.py").is_file() and root.parent != root:
        root = root.parent
    return folder.relative_to(root).as_posix()


def _harness_alias(name: str, fn: Callable[..., Any], extra: str | None) -> Callable[..., Any]:
    # the @task wrapper keeps the user's function as __wrapped__; re-register that
    inner = getattr(fn, "__wrapped__", fn)

    @functools.wraps(inner)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if extra is not None:  # the install line, not a traceback, when the extra is missing
            require_extra(extra, f"the {name} benchmark")
        return inner(*args, **kwargs)

    wrapper.__module__ = __name__  # registry namespace comes from the defining module
    alias = task(name=name)(wrapper)
    globals()[name] = alias  # reachable as harness.plugins.benchmark.<name>, like any @task
    return alias


def benchmark(
    name: str, *, extra: str | None = None, summary: str | None = None
) -> Callable[[F], F]:
    """Register a benchmark's ``@task`` function as benchmark ``name`` and ``harness/<name>``.

    Args:
        name: The benchmark's name (``harness/<name>``, ``harness list``, ``eval.yaml``).
        extra: The optional extra it needs (``"web"``), if any.
        summary: One line for ``harness list`` (default: the module docstring's first line).
    """

    def decorate(fn: F) -> F:
        alias = _harness_alias(name, fn, extra)
        folder = folder_of(fn)
        register(
            "benchmark", name, fn, summary=summary or _module_summary(fn), extra=extra,
            task=f"harness/{name}", folder=folder, path=_package_path(folder), alias=alias,
        )
        return fn

    return decorate
