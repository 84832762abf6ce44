"""Building a study cell's Inspect task: load the task, apply the intervention, bind levels.

Why a module of its own: every evaluation stack evaluates the same items for a cell (the
Inspect stack hands the task to ``eval_set``, the lm-eval stack writes its dataset out), so
both build the cell here and neither depends on the runner that dispatches to them.

Names resolve through :mod:`harness.registry`: a task by the name a user types after
``inspect eval`` (``harness/arithmetic``, a file or a folder), a solver level by a
registered agent name (``react``) or a ``module:object`` import path. Model args that name a
recipe product (``recipe=NAME``, ``recipe.<option>=v``; :mod:`harness.plugins.recipe`) become
``model_path=<product dir>``, the product trained first if the cache lacks it. Inspect's
private loader is reached only through :mod:`harness.inspect_compat`.

    task = build_task(cell, study)        # the same task identity on every run
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import inspect_compat, registry

if TYPE_CHECKING:
    from harness.factorial.study import Cell, Study

__all__ = ["build_task", "ensure_registry", "load_task", "resolve_solver"]


def ensure_registry() -> None:
    """Make every registered task, agent and model API findable.

    Benchmarks and methods register through the ``evalsuite`` plugins; the offline model
    APIs (``scripted/``, ``embedded/``...) register when their module is imported. Importing
    both here keeps the runner independent of whether Inspect's entry point loaded first.
    """
    import harness.models.providers  # noqa: F401  (registers the offline model APIs)

    registry.load_plugins()


def load_task(name: str, args: dict[str, Any]) -> Any:
    """A task by registered name (``harness/arithmetic``) or by file/dir path.

    Inspect namespaces a task by its package only when that package is an installed
    distribution of the same name; in an editable install the ``harness/`` tasks may
    register bare (``arithmetic``), so the bare name is tried too.
    """
    ensure_registry()
    lookup = inspect_compat.registry_lookup
    if lookup("task", name) is None and "/" in name and not Path(name).exists():
        bare = name.split("/", 1)[1]
        if lookup("task", bare) is not None:
            name = bare
    tasks = inspect_compat.load_tasks(name, args)
    if len(tasks) != 1:
        raise ValueError(f"task spec {name!r} names {len(tasks)} tasks; name exactly one")
    return tasks[0]


def resolve_solver(value: Any) -> Any:
    """A solver level, built: a registered agent name, ``module:object`` or
    ``path/file.py@object``, with optional args (``{name: react, args: {...}}``); a module's
    old home resolves to its new one (:mod:`harness.plugins.aliases`).

    An unknown name is an error that lists the registered agents; an agent that needs an
    optional extra says which one to install.
    """
    args: dict[str, Any] = {}
    if isinstance(value, dict):
        args = dict(value.get("args") or {})
        value = value["name"]
    name = str(value)
    ensure_registry()
    entry = registry.find("agent", name)
    if entry is None and (":" in name or "@" in name):  # module:object or file.py@object
        return registry.resolve_target(name)(**args)
    if entry is None:
        entry = registry.get("agent", name)  # raises, naming the registered agents
    if entry.extra is not None:
        registry.require_extra(entry.extra, f"agent {name!r}")
    return entry.obj(**args)


def build_task(cell: Cell, study: Study) -> Any:
    """The Inspect Task for one cell (same inputs, same task identity, on every run)."""
    from inspect_ai import task_with
    from inspect_ai.model import GenerateConfig, get_model

    from harness.factorial.interventions import apply_intervention
    from harness.plugins.recipe import resolve_model_args

    task = load_task(cell.task, cell.task_args)
    task = apply_intervention(task, cell.intervention, cell.intervention_seed)
    from harness.provenance import KEY, task_record

    # provenance once per run (issue 51): packages, sandbox, model file, data, study file
    record = task_record(task, cell.model, cell.model_args, study.source)
    updates: dict[str, Any] = {
        "metadata": {**(task.metadata or {}), **cell.metadata, KEY: record},
        "tags": sorted(set(task.tags or []) | set(cell.tags)),
    }
    if cell.model is not None:  # a recipe product is built (or found) here: model_path=DIR
        updates["model"] = get_model(cell.model, **resolve_model_args(cell.model_args))
    if cell.generate_config:
        updates["config"] = task.config.merge(GenerateConfig(**cell.generate_config))
    if cell.solver is not None:
        updates["solver"] = resolve_solver(cell.solver)
    if cell.sandbox is not None:
        updates["sandbox"] = None if cell.sandbox == "none" else cell.sandbox
    if study.replicates.epochs > 1:
        updates["epochs"] = study.replicates.epochs
    return task_with(task, **updates)
