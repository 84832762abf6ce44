"""The one module that touches Inspect's private API (``inspect_ai._*``).

Why a module of its own: private names move between Inspect releases without notice. Every
use the suite needs is here, with the reason it is needed and the public behaviour it stands
for, so an upgrade that breaks one breaks it in one place, and a test
(``tests/test_boundaries.py``) keeps private imports from appearing anywhere else.

Pinned against ``inspect-ai==0.3.285`` (``pyproject.toml``).
"""

from __future__ import annotations

from typing import Any

# The sandbox's private uses live in the sandbox package (it also ships alone); re-exported
# here so the suite keeps one adapter to import from.
from harness.sandbox._inspect_compat import (  # noqa: F401
    prerequisite_error,
    sandbox_self_checks,
    sandbox_tools_archive,
    sandbox_tools_paths,
)


def registry_lookup(kind: str, name: str) -> Any | None:
    """The object registered in Inspect's registry as ``kind`` (``"task"``, ``"solver"``,
    ``"scorer"``, ...) under ``name``, or None.

    Use: the study runner tries ``harness/<name>`` and its bare form (an editable install
    registers tasks without the package prefix). Inspect has no public lookup by name.
    """
    from inspect_ai._util.registry import registry_lookup as _lookup

    return _lookup(kind, name)  # type: ignore[arg-type]


def registry_info_name(obj: Any) -> str:
    """The registered name of a task, solver or scorer object (``harness/arithmetic``).

    Use: tests and reports compare scorers by name. Public Inspect exposes the name only on
    logs, not on live objects.
    """
    from inspect_ai._util.registry import registry_info

    return str(registry_info(obj).name)


def registry_names(kind: str) -> list[str]:
    """Every name registered with Inspect as ``kind``, sorted (entry points loaded first).

    Use: the registry test checks that each benchmark shows up as ``harness/<name>``, which
    is what ``inspect list tasks`` relies on.
    """
    from inspect_ai._util.registry import registry_find

    return sorted(
        str(o.__registry_info__.name)  # type: ignore[attr-defined]
        for o in registry_find(lambda info: info.type == kind)
    )


def load_tasks(spec: str, args: dict[str, Any]) -> list[Any]:
    """The tasks a ``inspect eval`` spec names (a registered name, a file, a folder, or
    ``file.py@task``), built with ``args``.

    Use: a study cell names its task exactly as a user types it after ``inspect eval``;
    ``eval_set`` needs built Task objects to pair cells with their logs. This is the loader
    behind the CLI; the public API only takes already-built tasks or the same specs inside
    ``eval()``, which would run them.
    """
    from inspect_ai._eval.loader import load_tasks as _load

    from harness.plugins.aliases import resolve

    return list(_load([resolve(spec)], args))


def record_task_args(task: Any, extra: dict[str, Any]) -> None:
    """Add ``extra`` to the task arguments Inspect records for ``task`` (in place).

    Use: ``eval_set`` pairs a task with its existing logs by name, args, model and plan,
    never by dataset; a study that changes only the dataset (an intervention) records the
    change as task args so its cells stay distinct and resumable. Inspect keeps the args
    in two private attributes (the registry params and the task's full params).
    """
    from inspect_ai._eval.task.constants import TASK_ALL_PARAMS_ATTR
    from inspect_ai._util.registry import REGISTRY_PARAMS

    for attr in (REGISTRY_PARAMS, TASK_ALL_PARAMS_ATTR):
        params = getattr(task, attr, None)
        if isinstance(params, dict):
            setattr(task, attr, {**params, **extra})


def recorded_task_args(task: Any) -> dict[str, Any]:
    """The task arguments Inspect will record for ``task`` (see :func:`record_task_args`)."""
    from inspect_ai._util.registry import registry_params

    return dict(registry_params(task))


def register_zstd_zip() -> None:
    """Teach :mod:`zipfile` to read the zstd members Inspect writes into ``.eval`` logs
    (Python < 3.14 has no zstd in zipfile; Inspect patches it in on import of this module).

    Use: tests that write synthetic ``.eval`` files the way Inspect does.
    """
    import inspect_ai._util.zipfile  # noqa: F401






def sandbox_environment_type(name: str) -> Any:
    """The provider class registered as sandbox ``name`` (``"docker"``, ``"local"``, ...).

    Use: tests drive Inspect's docker sandbox directly (task_init, sample_init, cleanup),
    as Inspect's own sandbox tests do; public Inspect only reaches providers inside eval().
    """
    from inspect_ai.util._sandbox.registry import registry_find_sandboxenv

    return registry_find_sandboxenv(name)


def load_scorer(spec: str, args: dict[str, Any]) -> Any:
    """The scorer a ``inspect score --scorer`` spec names (a registered name such as
    ``includes``, or ``file.py@name``), built with ``args``.

    Use: ``harness rescore`` takes the same scorer specs as ``inspect score``; the loader
    behind that CLI is private (``inspect_ai._eval.loader.scorer_from_spec``).
    """
    from inspect_ai._eval.loader import scorer_from_spec
    from inspect_ai.scorer._scorer import ScorerSpec

    from harness.plugins.aliases import resolve

    return scorer_from_spec(ScorerSpec(scorer=resolve(spec)), task_path=None, **args)


def log_task_identifier(log: Any) -> str:
    """The eval-set task identifier of a log (header), as ``eval_set`` pairs tasks with logs.

    Use: the study runner (:mod:`harness.factorial.selection`) names a cell's interrupted
    log as the ``resume`` of its selected task only when the log belongs to that task (the
    eval-set selection protocol refuses a resume log of another task); Inspect computes the
    identifier only inside ``eval_set``.
    """
    from inspect_ai._eval.evalset import task_identifier

    return str(task_identifier(log, None))
