"""Evaluation stacks: what runs a study's cells, registered by name.

A cell's ``stack`` level (``inspect`` unless a factor binds it) names the software that
evaluates the cell's items. Each stack is one class with one method, registered with
:func:`stack_runner` into :mod:`harness.registry` (kind ``stack``), so adding a stack is one
module plus one decorator and the study runner never names a stack in its code::

    @stack_runner("lm-eval", extra="lmeval")
    class LmEvalStack:
        def run(self, cells: Sequence[Cell], job: StackJob) -> None: ...

A runner writes one Inspect log per cell into ``job.log_dir`` carrying the cell's metadata
and tags (:attr:`Cell.metadata`, :attr:`Cell.tags`), so ``harness.results`` reads every
stack's logs alike and :func:`harness.factorial.run.cell_status` can tell which cells are
done. It is handed only the cells still to run.

The built-in stacks are ``inspect`` (:mod:`harness.factorial.inspect_stack`) and ``lm-eval``
(:mod:`harness.factorial.lmeval_stack`, needs ``pip install 'harness[lmeval]'``); the study
runner (:mod:`harness.factorial.run`) imports both, and a stack shipped by another package
registers through that package's ``evalsuite`` plugin. This module knows none of them: it
is the interface, the decorator and the lookup, so the runners depend on it and on
:mod:`harness.factorial.cells`, never on the runner that dispatches to them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, runtime_checkable

from harness.plugins import core as registry

if TYPE_CHECKING:
    from harness.factorial.study import Cell, Study

__all__ = ["Executor", "StackJob", "StackRunner", "get_stack", "stack_names", "stack_runner"]

Executor = Literal["local", "ray"]

R = TypeVar("R", bound=type)


@dataclass(frozen=True)
class StackJob:
    """What a runner needs besides the cells: the study, where its logs go, how to run.

    ``study_path`` is the study file (a worker in another process, e.g. a Ray task,
    rebuilds the study from it); ``executor``, ``max_tasks`` and ``eval_kwargs`` are
    ``run_study``'s arguments, which a runner honours where they apply to it.
    """

    study: Study
    study_path: str
    log_dir: str
    executor: Executor = "local"
    max_tasks: int | None = None
    eval_kwargs: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class StackRunner(Protocol):
    """What an evaluation stack does for a study: evaluate cells into the study's log dir.

    ``run`` evaluates every cell of ``cells`` (all of this stack) and writes one log per
    cell, with the cell's metadata and tags, under ``job.log_dir``. A cell that fails is
    left without a successful log (the study runner reports it as failed); an error that
    concerns the whole stack (a missing dependency) is raised.
    """

    def run(self, cells: Sequence[Cell], job: StackJob) -> None:
        """Evaluate ``cells`` into ``job.log_dir``."""
        ...


def stack_runner(
    name: str, *, summary: str | None = None, extra: str | None = None
) -> Callable[[R], R]:
    """Register a :class:`StackRunner` class as the evaluation stack ``name`` (the value
    of a study's ``stack`` factor). ``extra``: the optional extra the stack needs."""

    def decorate(cls: R) -> R:
        registry.register("stack", name, cls, summary=summary, extra=extra)
        return cls

    return decorate


def stack_names() -> list[str]:
    """Every registered stack name, sorted."""
    return registry.names("stack")


def get_stack(name: str, *, require: bool = True) -> StackRunner:
    """A runner for the stack ``name``.

    Raises:
        harness.registry.RegistryError: ``name`` is not a registered stack (the message
            lists the registered ones).
        harness.registry.MissingExtraError: the stack needs an optional extra that is
            not installed and ``require`` is true (the message is the ``pip install``
            line).
    """
    entry = registry.get("stack", name)
    if require and entry.extra is not None:
        registry.require_extra(entry.extra, f"the {name!r} evaluation stack")
    runner = entry.obj()
    if not isinstance(runner, StackRunner):
        raise registry.RegistryError(f"stack {name!r} ({entry.module}) has no run(cells, job)")
    return runner
