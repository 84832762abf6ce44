"""A study's cells as an Inspect Flow spec, so users of that tooling run the grid there and
analyse it here (issue 52, item 3).

Why a cell task instead of one Flow entry per task/model/solver: a study cell is more than a
task, a model and a solver (an intervention rewrites the dataset, a recipe level builds a
model, the cell's metadata names its factor levels, and its provenance record travels with
it). :func:`study_cell` rebuilds the cell exactly as :mod:`harness.factorial.cells` does for
the suite's own runner, so a Flow run writes the same logs (same task name, arguments,
metadata) into the study's ``logs/<run>/`` and ``harness study report`` reads them as if the
suite had run them. Only cells on the ``inspect`` stack can go to Flow (an ``lm-eval`` cell
is not an Inspect task).

    harness study flow methods/studies/arithmetic_demo --out flow.yaml
    flow run flow.yaml                # inspect-flow, in this environment
    harness study report methods/studies/arithmetic_demo/logs/main --out ...
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from inspect_ai import Task, task, task_with

if TYPE_CHECKING:
    from harness.factorial.study import Cell, Study

# Inspect imports this module on every run (harness._registry registers study_cell), so the
# study machinery is imported inside the functions that need it.

__all__ = ["FLOW_TASK", "flow_spec", "study_cell", "write_flow_spec"]

FLOW_TASK = "harness/study_cell"
"""The registry name Flow resolves each cell's task by (``harness`` is an ``inspect_ai``
entry point, so the name works wherever the suite is installed)."""


def _cell(study: Study, cell_id: str) -> Cell:
    from harness.factorial.study import StudyError

    for cell in study.cells():
        if cell.id == cell_id:
            return cell
    raise StudyError(f"{study.source or study.name}: no cell {cell_id!r} "
                     f"(the study file changed since the spec was written?)")


@task(name="study_cell")
def study_cell(study: str, cell: str) -> Task:
    """The Inspect task of one study cell (``study``: the study YAML; ``cell``: its id), built
    as the suite's own runner builds it, with the cell's own task name."""
    from harness.factorial.cells import build_task
    from harness.factorial.study import StudyError, load_study

    loaded = load_study(study)
    found = _cell(loaded, cell)
    if found.stack != "inspect":
        raise StudyError(f"{study}: cell {cell} runs on the {found.stack!r} stack, "
                         "which is not an Inspect task")
    built: Task = build_task(found, loaded)
    # the log names the cell's own task (``arithmetic``), not this wrapper, so the results
    # reader keys the cell as it keys the suite's own runs of it
    named: Task = task_with(built, name=built.name)
    return named


def flow_spec(study_path: str | Path, run: str = "main",
              log_dir: str | Path | None = None) -> dict[str, Any]:
    """The Flow spec (as data) of every ``inspect``-stack cell of a study: one Flow task per
    cell, logging into the run's folder. Cells already complete are left to Flow's own
    skipping (its eval-set re-run finds their logs)."""
    from harness.factorial.study import StudyError, load_study

    path = Path(study_path)
    if path.is_dir():
        path = path / "study.yaml"
    study = load_study(path)
    directory = Path(log_dir) if log_dir is not None else study.run_dir(run)
    cells = study.cells()
    other = sorted({c.stack for c in cells} - {"inspect"})
    if other:
        raise StudyError(f"{path}: cells on the {', '.join(other)} stack cannot run in Flow; "
                         "run them with `harness study run`")
    tasks: list[dict[str, Any]] = []
    for cell in cells:
        if any(str(key).startswith("recipe") for key in cell.model_args) \
                or str(cell.model_args.get("model_path", "")).startswith("recipe:"):
            raise StudyError(f"{path}: cell {cell.id} trains its model from a recipe; build "
                             "it with `harness study run` (Flow needs a model it can name)")
        entry: dict[str, Any] = {
            "factory": FLOW_TASK,  # not "name": Flow would rename the task to it
            "args": {"study": str(path.resolve()), "cell": cell.id},
            "flow_metadata": {"study": study.name, "cell_id": cell.id,
                              "levels": dict(cell.levels)},
        }
        if cell.model is not None:  # eval_set needs one; the cell's task carries the same
            entry["model"] = {"name": cell.model, "model_args": dict(cell.model_args)}
        tasks.append(entry)
    return {"log_dir": str(directory.resolve()), "tasks": tasks}


def write_flow_spec(study_path: str | Path, out: str | Path, run: str = "main",
                    log_dir: str | Path | None = None) -> Path:
    """Write the spec as YAML to ``out`` and the study copy into the run's log folder (what
    ``harness study run`` keeps there, so ``harness study report`` finds the study)."""
    import yaml

    from harness.atomic import write_text
    from harness.factorial.study import STUDY_COPY

    spec = flow_spec(study_path, run=run, log_dir=log_dir)
    path = Path(study_path)
    if path.is_dir():
        path = path / "study.yaml"
    directory = Path(spec["log_dir"])
    directory.mkdir(parents=True, exist_ok=True)
    source = path.read_text()
    copy = directory / STUDY_COPY
    if not copy.exists() or copy.read_text() != source:
        write_text(copy, source)
    header = (f"# Inspect Flow spec of study {path} (run {run}): one task per cell.\n"
              f"# written by `harness study flow`; run with `flow run {Path(out).name}`, then\n"
              f"# `harness study report {directory}`\n")
    write_text(Path(out), header + yaml.safe_dump(spec, sort_keys=False))
    return Path(out)
