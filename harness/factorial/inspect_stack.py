"""The ``inspect`` evaluation stack: a study's cells through Inspect's ``eval_set``.

Locally, one ``eval_set`` over every cell (``max_tasks`` in parallel) into the study's log
dir; with ``executor="ray"``, one Ray task per cell, each with its own ``eval_set``.
``eval_set`` pairs each cell's task with the logs already in the dir (see
:mod:`harness.factorial.run`), so a rerun resumes an interrupted cell.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.factorial.cells import build_task
from harness.plugins.stack import StackJob, stack_runner

if TYPE_CHECKING:
    from harness.factorial.study import Cell

__all__ = ["EVAL_DEFAULTS", "InspectStack", "eval_cells"]

EVAL_DEFAULTS: dict[str, Any] = {
    "display": "none",
    "log_dir_allow_dirty": True,  # other stacks' cells and logs share the study's dir
    "retry_attempts": 1,
    "retry_immediate": True,
    "retry_wait": 1,
    "ctl_server": False,
}
"""``eval_set`` options a study run uses unless ``run_study(**eval_kwargs)`` overrides them."""


def eval_cells(study_path: str, cell_ids: Sequence[str], log_dir: str,
               max_tasks: int | None, eval_kwargs: dict[str, Any]) -> bool:
    """Evaluate the cells ``cell_ids`` of a study into ``log_dir`` with ``eval_set``.

    Takes the study path (not objects) so a Ray worker can call it after unpickling.
    """
    from inspect_ai import eval_set

    from harness.factorial.study import load_study

    study = load_study(study_path)
    wanted = set(cell_ids)
    tasks = [build_task(cell, study) for cell in study.cells() if cell.id in wanted]
    if not tasks:
        return True
    success, _ = eval_set(
        tasks, log_dir=log_dir, limit=study.limit, max_tasks=max_tasks,
        **{**EVAL_DEFAULTS, **eval_kwargs},
    )
    return bool(success)


def _run_ray(study_path: str, cells: Sequence[Cell], log_dir: str,
             eval_kwargs: dict[str, Any]) -> None:
    """One Ray task per cell, each running its own eval_set into the shared log dir.

    Each cell writes under ``<log_dir>/<cell id>/``: concurrent ``eval_set`` calls in one
    folder race on its ``logs.json`` manifest (one reads another's half-written log).
    """
    from harness.registry import require_extra

    require_extra("distributed", "executor='ray'")
    import ray

    started_here = not ray.is_initialized()
    if started_here:
        ray.init(include_dashboard=False, log_to_driver=False)
    try:
        remote = ray.remote(num_cpus=1, max_retries=0)(eval_cells)
        refs = [remote.remote(study_path, [cell.id], str(Path(log_dir) / cell.id), 1,
                              eval_kwargs)
                for cell in cells]
        ray.get(refs)
    finally:
        if started_here:
            ray.shutdown()


@stack_runner("inspect", summary="Inspect's eval_set (local or one Ray task per cell)")
class InspectStack:
    """Runs cells with Inspect's ``eval_set``, locally or on Ray."""

    def run(self, cells: Sequence[Cell], job: StackJob) -> None:
        """Evaluate ``cells`` into ``job.log_dir`` with the job's executor."""
        if job.executor == "ray":
            _run_ray(job.study_path, cells, job.log_dir, job.eval_kwargs)
        elif job.executor == "local":
            eval_cells(job.study_path, [c.id for c in cells], job.log_dir, job.max_tasks,
                       job.eval_kwargs)
        else:
            raise ValueError(f"executor must be 'local' or 'ray', got {job.executor!r}")
