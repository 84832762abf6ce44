"""The registry's machinery: entries, registration, lookups, extras, plugin loading.

Every plug-in kind's module (:mod:`harness.plugins`) builds its decorator on
:func:`registered` / :func:`register` here; :mod:`harness.registry` is the one public face.
Harness never imports ``benchmarks`` or ``methods``: those packages announce a module that
imports all their registering modules through the ``evalsuite`` entry-point group
(``pyproject.toml``), and :func:`load_plugins` imports them the first time anyone asks the
registry what exists; each registering module is imported on its own
(:func:`import_modules`), so a broken one hides only itself and is listed in
:data:`BROKEN`. Registering modules must import lightly (no torch, playwright, ray at
module level), so listing works with the base install; an entry that needs an optional extra
says so (``extra="web"``) and :func:`require_extra` turns the missing import into the
``pip install`` line to type.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import inspect
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar, get_args

__all__ = [
    "EXTRAS",
    "Entry",
    "Kind",
    "MissingExtraError",
    "RegistryError",
    "entries",
    "extra_available",
    "get",
    "load_plugins",
    "declare",
    "names",
    "BROKEN",
    "broken_modules",
    "import_modules",
    "register",
    "registered",
    "resolve_target",
    "find",
    "folder_of",
    "KINDS",
    "require_extra",
    "unregister",
]

Kind = Literal[
    "benchmark", "agent", "whitebox_method", "editor", "model", "policy", "intervention",
    "stack", "recipe", "plain_method",
]
KINDS: tuple[str, ...] = get_args(Kind)

PLUGIN_GROUP = "evalsuite"
"""Entry-point group through which ``benchmarks`` and ``methods`` announce their modules."""

EXTRAS: dict[str, tuple[str, ...]] = {
    "web": ("playwright",),
    "cpu": ("torch", "transformers"),
    "gpu": ("vllm",),
    "lmeval": ("lm_eval",),
    "distributed": ("ray",),
}
"""Optional extra -> the top-level modules it provides (``pip install 'harness[extra]'``)."""

T = TypeVar("T")
log = logging.getLogger(__name__)


class RegistryError(ValueError):
    """An unknown name, or a name registered twice by different objects."""


class MissingExtraError(ModuleNotFoundError):
    """Something needs an optional extra that is not installed; the message says what to
    install (a subclass of ModuleNotFoundError, so ``except ImportError`` still works)."""


@dataclass(frozen=True)
class Entry:
    """One registered thing. ``obj`` is what the decorator wrapped (a task function, a
    factory, a class); ``meta`` holds kind-specific facts (a benchmark's folder, whether an
    editor is white-box only)."""

    kind: Kind
    name: str
    obj: Any
    summary: str
    module: str
    extra: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def available(self) -> bool:
        """True when the extra this entry needs (if any) is installed."""
        return self.extra is None or extra_available(self.extra)

    def load(self) -> Any:
        """The registered object, importing it first when it was declared by import path
        (a missing optional extra raises :class:`MissingExtraError` with the install line)."""
        if not isinstance(self.obj, str):
            return self.obj
        if self.extra is not None:
            require_extra(self.extra, f"{self.kind.replace('_', ' ')} {self.name!r}")
        obj = resolve_target(self.obj)
        current = _ENTRIES.get((self.kind, self.name))
        if current is None or isinstance(current.obj, str):
            # the module's own decorator may have registered it on import; else record it
            _ENTRIES[(self.kind, self.name)] = Entry(
                self.kind, self.name, obj, self.summary, str(getattr(obj, "__module__", "")),
                self.extra, self.meta)
        return obj

    @property
    def status(self) -> str:
        """``available`` or ``needs pip install 'harness[EXTRA]'`` (what ``harness list``
        prints)."""
        return "available" if self.available else f"needs pip install 'harness[{self.extra}]'"


_ENTRIES: dict[tuple[str, str], Entry] = {}
_PLUGINS_LOADED = False


def _summary(obj: Any, given: str | None) -> str:
    if given:
        return given
    doc = inspect.getdoc(getattr(obj, "__wrapped__", obj)) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def _origin(obj: Any) -> str:
    """Where ``obj`` is defined: its source file when known (a task file that Inspect loads
    by path under another module name is still the same benchmark), else its module."""
    try:
        return str(Path(inspect.getfile(getattr(obj, "__wrapped__", obj))).resolve())
    except (TypeError, OSError):
        return str(getattr(obj, "__module__", "") or id(obj))


def register(
    kind: Kind,
    name: str,
    obj: Any,
    *,
    summary: str | None = None,
    extra: str | None = None,
    **meta: Any,
) -> Entry:
    """Register ``obj`` as ``kind`` ``name`` and return its entry.

    Registering the same name again with an object from the same module replaces it (a test
    runner that reloads a module must not fail); a different module taking a name already
    used is an error that names both.
    """
    if kind not in KINDS:
        raise RegistryError(f"unknown registry kind {kind!r}: one of {', '.join(KINDS)}")
    if not name or any(c.isspace() for c in name):
        raise RegistryError(f"invalid {kind} name {name!r}")
    if extra is not None and extra not in EXTRAS:
        raise RegistryError(f"{kind} {name!r}: unknown extra {extra!r} ({', '.join(EXTRAS)})")
    module = str(getattr(obj, "__module__", "") or "")
    previous = _ENTRIES.get((kind, name))
    if previous is not None and isinstance(previous.obj, str):
        # declared by import path; the module's decorator now registers the object itself
        if previous.obj != f"{module}:{getattr(obj, '__qualname__', '')}":
            raise RegistryError(
                f"{kind} {name!r} is declared as {previous.obj} but registered by {module}")
        summary = summary or previous.summary
        extra = extra or previous.extra
        meta = {**previous.meta, **meta}
    elif previous is not None and _origin(previous.obj) != _origin(obj):
        raise RegistryError(
            f"{kind} {name!r} is registered twice: by {previous.module} and by {module}"
        )
    entry = Entry(kind, name, obj, _summary(obj, summary), module, extra, dict(meta))
    _ENTRIES[(kind, name)] = entry
    return entry


def declare(
    kind: Kind, name: str, target: str, *, summary: str, extra: str | None = None, **meta: Any
) -> Entry:
    """Register by import path (``"package.module:Object"``) without importing it.

    For objects whose module needs an optional extra at import time (torch for the KV-cache
    methods): listing shows them, and :meth:`Entry.load` imports them on first use. If the
    module is imported anyway, its own decorator replaces this declaration with the object.
    """
    if kind not in KINDS:
        raise RegistryError(f"unknown registry kind {kind!r}: one of {', '.join(KINDS)}")
    if ":" not in target:
        raise RegistryError(f"{kind} {name!r}: target {target!r} is not 'module:attr'")
    current = _ENTRIES.get((kind, name))
    if current is not None and not isinstance(current.obj, str):
        return current  # already imported and registered by its own decorator
    entry = Entry(kind, name, target, summary, target.split(":")[0], extra, dict(meta))
    _ENTRIES[(kind, name)] = entry
    return entry


def unregister(kind: Kind, name: str) -> None:
    """Remove one entry (tests that register a throw-away entry clean up with this)."""
    _ENTRIES.pop((kind, name), None)


def registered(
    kind: Kind, name: str, *, summary: str | None = None, extra: str | None = None, **meta: Any
) -> Callable[[T], T]:
    """The generic decorator: ``@registered("agent", "react")`` registers and returns the
    object unchanged. Kind-specific decorators (``@agent_method``...) call this."""

    def decorate(obj: T) -> T:
        register(kind, name, obj, summary=summary, extra=extra, **meta)
        return obj

    return decorate


# ----------------------------------------------------------------------------- lookups


BROKEN: dict[str, str] = {}
"""Registering modules that failed to import: module -> ``ErrorType: message``. Each was
imported on its own (:func:`import_modules`), so it hides only its own entries;
``harness list`` shows it as broken, with the error."""


def import_modules(modules: Iterable[str]) -> None:
    """Import each registering module on its own: one that fails is recorded in
    :data:`BROKEN` and logged, and the others still register (one broken module used to
    make every benchmark listed after it "unknown", with a log line as the only clue)."""
    from harness.plugins.aliases import resolve

    for module in modules:
        try:
            importlib.import_module(resolve(module))
        except Exception as err:  # any failure of a plugin module is the plugin's
            BROKEN[module] = f"{type(err).__name__}: {err}".splitlines()[0]
            log.warning("evalsuite module %s failed to import: %s", module, BROKEN[module])


def broken_modules() -> dict[str, str]:
    """:data:`BROKEN` after every plugin was loaded."""
    load_plugins()
    return dict(BROKEN)


def load_plugins() -> None:
    """Import every module announced in the ``evalsuite`` entry-point group, once.

    A plugin that fails to import is logged and skipped, so one broken package cannot hide
    the rest of the suite; its entries are then missing and a lookup names what exists.
    """
    global _PLUGINS_LOADED
    if _PLUGINS_LOADED:
        return
    _PLUGINS_LOADED = True
    for ep in sorted(importlib.metadata.entry_points(group=PLUGIN_GROUP), key=lambda e: e.name):
        try:
            ep.load()
        except Exception as err:  # a broken plugin must not hide the others
            BROKEN[ep.value] = f"{type(err).__name__}: {err}".splitlines()[0]
            log.warning("evalsuite plugin %s (%s) failed to load: %s", ep.name, ep.value, err)


def entries(kind: Kind | None = None) -> list[Entry]:
    """Registered entries (of one kind), sorted by kind then name."""
    load_plugins()
    return sorted(
        (e for e in _ENTRIES.values() if kind is None or e.kind == kind),
        key=lambda e: (KINDS.index(e.kind), e.name),
    )


def names(kind: Kind) -> list[str]:
    """Registered names of one kind, sorted."""
    return [e.name for e in entries(kind)]


def get(kind: Kind, name: str) -> Entry:
    """The entry ``kind`` ``name``; an unknown name is an error listing the known ones."""
    load_plugins()
    entry = _ENTRIES.get((kind, name))
    if entry is None:
        known = ", ".join(names(kind)) or "none"
        raise RegistryError(f"unknown {kind.replace('_', ' ')} {name!r}; registered: {known}")
    return entry


def find(kind: Kind, name: str) -> Entry | None:
    """The entry or None (no error)."""
    load_plugins()
    return _ENTRIES.get((kind, name))


def resolve_target(target: str) -> Any:
    """``package.module:attr`` (or ``package/module.py@attr``, as ``inspect eval`` names a
    file's object) -> the attribute. A module's old home (:mod:`harness.plugins.aliases`)
    resolves to the new one with a deprecation note."""
    from harness.plugins.aliases import resolve

    target = resolve(target)
    path, at, name = target.rpartition("@")
    if at and path.endswith(".py") and ":" not in target:
        target = f"{path.removesuffix('.py').removeprefix('./').replace('/', '.')}:{name}"
    module_name, sep, attr = target.partition(":")
    if not sep or not attr:
        raise RegistryError(f"{target!r} is not 'module:attr'")
    return getattr(importlib.import_module(module_name), attr)


def folder_of(obj: Any) -> Path:
    """The folder of the file that defines ``obj`` (a benchmark's folder)."""
    return Path(inspect.getfile(getattr(obj, "__wrapped__", obj))).resolve().parent


# ----------------------------------------------------------------------------- extras


def extra_available(extra: str) -> bool:
    """True when every module the extra provides can be imported (without importing it)."""
    return all(importlib.util.find_spec(m) is not None for m in EXTRAS[extra])


def require_extra(extra: str, what: str) -> None:
    """Raise :class:`MissingExtraError` with the install line when ``extra`` is missing.

    Call it at the top of the function that needs the extra, before the import::

        require_extra("web", "the Webscape browser")
        from playwright.async_api import async_playwright
    """
    if extra not in EXTRAS:
        raise RegistryError(f"unknown extra {extra!r} ({', '.join(EXTRAS)})")
    missing = [m for m in EXTRAS[extra] if importlib.util.find_spec(m) is None]
    if missing:
        raise MissingExtraError(
            f"{what} needs the {extra!r} extra ({', '.join(missing)} not installed): "
            f"pip install 'harness[{extra}]'  (from a checkout: pip install -e '.[{extra}]')"
        )
