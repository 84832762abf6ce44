"""The ``inspect`` evaluation stack: a study's cells through Inspect's ``eval_set``.

Every cell is one selected task of the study dir's eval set, on Inspect's eval-set
selection protocol (:mod:`harness.factorial.selection`): locally, one worker in this
process runs every cell (``max_tasks`` at once); with ``executor="ray"``, one Ray task per
cell with the cell's resources (:mod:`harness.factorial.resources`). All write into the one
flat log dir, and the runner alone keeps its eval-set bookkeeping, so a rerun resumes an
interrupted cell from its log (finished samples kept) and leaves one log per cell.

:func:`eval_cells` (a plain ``eval_set`` over some cells) stays for callers that evaluate
cells outside a study run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from harness.factorial.cells import build_task
from harness.factorial.selection import EVAL_DEFAULTS, run_selected_cells
from harness.plugins.stack import StackJob, stack_runner

if TYPE_CHECKING:
    from harness.factorial.study import Cell

__all__ = ["EVAL_DEFAULTS", "InspectStack", "eval_cells"]



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


@stack_runner("inspect", summary="Inspect's eval_set, each cell a selected task "
              "(local, or one Ray task per cell)")
class InspectStack:
    """Runs cells with Inspect's ``eval_set``, locally or on Ray."""

    def run(self, cells: Sequence[Cell], job: StackJob) -> None:
        """Evaluate ``cells`` into ``job.log_dir`` with the job's executor."""
        if job.executor not in ("local", "ray"):
            raise ValueError(f"executor must be 'local' or 'ray', got {job.executor!r}")
        run_selected_cells(job.study, job.study_path, cells, job.log_dir, job.executor,
                           job.max_tasks, job.eval_kwargs)
