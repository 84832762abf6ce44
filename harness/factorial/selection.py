"""A study's cells as the selected tasks of one Inspect eval set (the selection protocol).

Why: Inspect's ``eval_set`` keeps its bookkeeping (``.eval-set-id``, ``eval-set.json``,
``logs.json``, retries, removing superseded logs) in the log dir it runs in, and two
``eval_set`` processes in one dir race on it. Inspect's answer for external runners is the
eval-set capture/selection protocol (``inspect_ai/_eval/eval_set_selection.py``): a worker
whose ``INSPECT_EVAL_SET_CAPTURE`` names a file enumerates its tasks (their identifiers)
and exits; a worker whose ``INSPECT_EVAL_SET_SELECTION`` names a selection document runs
only the tasks it names, stamped with the runner's eval-set id, resuming each from the log
the document names, and does no bookkeeping at all. Many workers can then write into one
flat folder, and the runner is the one writer of its metadata.

Here the runner is :func:`run_selected_cells`: it reads (or makes) the dir's eval-set id,
pairs each unfinished cell with its newest interrupted log, and starts workers
(:func:`run_cells_as_selection`), in this process for the local executor (one selection of
every cell, ``max_tasks`` at once) or one Ray task per cell with the cell's resources
(:mod:`harness.factorial.resources`). After the workers, it writes ``eval-set.json``,
removes the logs a successful attempt superseded (so a killed and resumed cell leaves one
log, each sample in it once) and rewrites ``logs.json``. Workers never fail a task on
sample errors (the protocol leaves that to the runner), so the runner resumes a cell whose
log finished with errored samples from that log, up to ``retry_attempts`` times.

The wire format written is selection schema version 4 (``log_dir`` and ``max_tasks``
overrides); Inspect refuses a document newer than it understands, so the version is pinned
here rather than read from Inspect.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.atomic import write_text

if TYPE_CHECKING:
    from harness.factorial.resources import Resources
    from harness.factorial.study import Cell, Study

__all__ = [
    "CAPTURE_ENV",
    "EVAL_DEFAULTS",
    "EVAL_SET_ID_FILE",
    "SELECTION_ENV",
    "SELECTION_VERSION",
    "cell_logs",
    "run_cells_as_selection",
    "run_selected_cells",
]

CAPTURE_ENV = "INSPECT_EVAL_SET_CAPTURE"
SELECTION_ENV = "INSPECT_EVAL_SET_SELECTION"
SELECTION_VERSION = 4
EVAL_SET_ID_FILE = ".eval-set-id"

EVAL_DEFAULTS: dict[str, Any] = {
    "display": "none",
    "log_dir_allow_dirty": True,  # other stacks' cells and logs share the study's dir
    "retry_attempts": 1,
    "retry_immediate": True,
    "retry_wait": 1,
    "ctl_server": False,
}
"""``eval_set`` options a study run uses unless ``run_study(**eval_kwargs)`` overrides them
(defined here and re-exported by :mod:`harness.factorial.inspect_stack`, which imports this
module, so the two do not import each other)."""


@contextlib.contextmanager
def _environ(name: str, value: str) -> Iterator[None]:
    """``os.environ[name] = value`` for the block (a Ray worker process is reused)."""
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


@contextlib.contextmanager
def _cwd(path: str | None) -> Iterator[None]:
    """Run in the runner's working directory: a task's source file, relative to it, is
    part of the task's identity, so capture and selection must agree on it."""
    before = os.getcwd()
    if path is not None:
        os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def _capture(tasks: list[Any], log_dir: str, limit: int | None,
             kwargs: dict[str, Any]) -> list[dict[str, Any]]:
    """The capture manifest's task rows of ``tasks`` (Inspect computes the identifiers)."""
    from inspect_ai import eval_set

    with tempfile.TemporaryDirectory(prefix="capture-") as scratch:
        manifest = Path(scratch) / "capture.json"
        with _environ(CAPTURE_ENV, str(manifest)):
            try:
                eval_set(tasks, log_dir=log_dir, limit=limit, **kwargs)
            except SystemExit as stop:  # capture mode exits once the manifest is written
                if stop.code not in (0, None):
                    raise
        rows: list[dict[str, Any]] = json.loads(manifest.read_text())["tasks"]
    if len(rows) != len(tasks):
        raise RuntimeError(f"eval-set capture listed {len(rows)} tasks for {len(tasks)} cells")
    return sorted(rows, key=lambda row: int(row["sequence"]))


def _resume_for(identifier: str, candidate: str | None) -> str | None:
    """``candidate`` if it is a readable log of the task ``identifier``, else None (a log
    of an edited cell cannot be resumed; the cell starts again)."""
    if candidate is None or not Path(candidate).is_file():
        return None
    from harness.results import read_task_identities

    found = read_task_identities(candidate)["identifier"].to_list()
    return candidate if found == [identifier] else None


def run_cells_as_selection(study_path: str, cell_ids: Sequence[str], log_dir: str,
                           eval_set_id: str, resume: Mapping[str, str],
                           max_tasks: int | None, eval_kwargs: dict[str, Any],
                           workdir: str | None = None) -> list[dict[str, Any]]:
    """A worker: capture the cells' tasks, then run them as one eval-set selection.

    Takes the study path (not objects) so a Ray worker can call it after unpickling.
    ``resume`` maps a cell id to an interrupted log of it. Returns one row per cell: the
    capture row (``identifier``, ``name``, ``file``, ``args``, ``model``...) with
    ``cell_id``, the log's ``status`` and ``location``.
    """
    from inspect_ai import eval_set

    from harness.factorial.cells import build_task
    from harness.factorial.study import load_study

    with _cwd(workdir):
        study = load_study(study_path)
        wanted = set(cell_ids)
        cells = [cell for cell in study.cells() if cell.id in wanted]
        if not cells:
            return []
        tasks = [build_task(cell, study) for cell in cells]
        kwargs = {**EVAL_DEFAULTS, **eval_kwargs}
        rows = _capture(tasks, log_dir, study.limit, kwargs)
        entries: list[dict[str, Any]] = []
        for cell, row in zip(cells, rows, strict=True):
            entry: dict[str, Any] = {"identifier": row["identifier"]}
            previous = _resume_for(row["identifier"], resume.get(cell.id))
            if previous is not None:
                entry["resume"] = previous
            entries.append(entry)
        overrides: dict[str, Any] = {"log_dir": log_dir}
        if max_tasks is not None:
            overrides["max_tasks"] = max_tasks
        document = {"version": SELECTION_VERSION, "eval_set_id": eval_set_id,
                    "tasks": entries, "overrides": overrides}
        with tempfile.TemporaryDirectory(prefix="selection-") as scratch:
            path = Path(scratch) / "selection.json"
            path.write_text(json.dumps(document))
            with _environ(SELECTION_ENV, str(path)):
                _, logs = eval_set(tasks, log_dir=log_dir, limit=study.limit, **kwargs)
    out = []
    for cell, row in zip(cells, rows, strict=True):
        log = next((lg for lg in logs
                    if (lg.eval.metadata or {}).get("cell_id") == cell.id), None)
        out.append({**row, "cell_id": cell.id,
                    "status": None if log is None else log.status,
                    "location": None if log is None else log.location,
                    "errored": _errored_samples(log)})
    return out


def _errored_samples(log: Any) -> int:
    """Samples of a finished log that ended in an error (Inspect's ``completed_samples``
    counts the ones that completed without one); 0 when the log has no results."""
    results = None if log is None else log.results
    if results is None:
        return 0
    return max(0, int(results.total_samples) - int(results.completed_samples))


# --------------------------------------------------------------------------- the runner


def eval_set_id(log_dir: Path) -> str:
    """The eval-set id of ``log_dir`` (``.eval-set-id``), made and written when absent."""
    path = log_dir / EVAL_SET_ID_FILE
    if path.is_file() and path.read_text().strip():
        return path.read_text().strip()
    new = uuid.uuid4().hex
    write_text(path, new)
    return new


def cell_logs(log_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """Each cell's logs in ``log_dir`` (this folder only), oldest first: ``log_file``,
    ``status``, ``created``."""
    from harness.results import read_headers

    frame = read_headers(log_dir, recursive=False)
    logs: dict[str, list[dict[str, Any]]] = {}
    for row in frame.iter_rows(named=True):
        cell_id = json.loads(row.get("eval_metadata") or "{}").get("cell_id")
        if cell_id is not None:
            logs.setdefault(cell_id, []).append(row)
    for rows in logs.values():
        rows.sort(key=lambda r: (str(r.get("created") or ""), str(r["log_file"])))
    return logs


def _resume_candidates(log_dir: Path, cells: Sequence[Cell]) -> dict[str, str]:
    """The newest unsuccessful log of each cell that has no successful one."""
    logs = cell_logs(log_dir)
    out: dict[str, str] = {}
    for cell in cells:
        rows = logs.get(cell.id, [])
        if rows and not any(r["status"] == "success" for r in rows):
            out[cell.id] = str(log_dir / Path(str(rows[-1]["log_file"])).name)
    return out


def _remove_superseded(log_dir: Path, cells: Sequence[Cell]) -> list[str]:
    """Delete the logs of each cell's task that its newest successful log supersedes (what
    ``eval_set`` does after a retry): a resumed attempt holds the interrupted one's samples,
    so the older log would only hold them a second time. Only logs of the same task
    identifier go; a log of an edited cell (another identifier) and cells without a
    success keep theirs."""
    from harness.results import read_task_identities

    identities = read_task_identities(log_dir, recursive=False)
    by_name = {Path(str(r["log_file"])).name: r["identifier"]
               for r in identities.iter_rows(named=True)}

    def identifier(name: str) -> str | None:
        return by_name.get(name)  # None for an unreadable log: not ours to remove

    removed: list[str] = []
    logs = cell_logs(log_dir)
    for cell in cells:
        rows = logs.get(cell.id, [])
        good = [r for r in rows if r["status"] == "success"]
        if not good:
            continue
        keep = Path(str(good[-1]["log_file"])).name
        kept_identifier = identifier(keep)
        for row in rows:
            name = Path(str(row["log_file"])).name
            if name != keep and kept_identifier is not None \
                    and identifier(name) == kept_identifier:
                (log_dir / name).unlink(missing_ok=True)
                removed.append(name)
    return removed


def _write_eval_set_info(log_dir: Path, set_id: str, rows: Sequence[dict[str, Any]],
                         order: Mapping[str, int]) -> None:
    """``eval-set.json`` in Inspect's shape (``eval_set_id``, ``tasks``), merged with the
    entries an earlier run wrote for cells not in this one."""
    path = log_dir / "eval-set.json"
    tasks: dict[str, dict[str, Any]] = {}
    if path.is_file():
        with contextlib.suppress(ValueError, KeyError):
            for task in json.loads(path.read_text())["tasks"]:
                tasks[str(task["task_id"])] = task
    by_cell = cell_logs(log_dir)
    for row in rows:
        logs = by_cell.get(row["cell_id"], [])
        task_id = _task_id(log_dir, logs[-1]) if logs else row["identifier"]
        tasks.pop(row["identifier"], None)
        tasks[task_id] = {
            "name": row.get("name"), "task_id": task_id, "task_file": row.get("file"),
            "task_args": row.get("args") or {}, "model": row.get("model"),
            "model_args": row.get("model_args") or {}, "model_roles": row.get("model_roles"),
            "sequence": order.get(row["cell_id"], 0),
        }
    ordered = sorted(tasks.values(), key=lambda t: int(t.get("sequence") or 0))
    write_text(path, json.dumps({"eval_set_id": set_id, "tasks": ordered}, indent=2))


def _task_id(log_dir: Path, row: Mapping[str, Any]) -> str:
    from harness.results import read_task_identities

    found = read_task_identities(log_dir / Path(str(row["log_file"])).name)
    if found.is_empty():
        raise RuntimeError(f"{row['log_file']}: not a readable Inspect log")
    return str(found["task_id"][0])


def _ray_run(study_path: str, cells: Sequence[Cell], log_dir: str, set_id: str,
             resume: Mapping[str, str], needs: Mapping[str, Resources],
             eval_kwargs: dict[str, Any]) -> list[dict[str, Any]]:
    """One Ray task per cell, each with the cell's resources, all into ``log_dir``."""
    from harness.factorial.resources import infeasible
    from harness.factorial.study import StudyError
    from harness.registry import require_extra

    require_extra("distributed", "executor='ray'")
    import ray

    started_here = not ray.is_initialized()
    if started_here:
        ray.init(include_dashboard=False, log_to_driver=False)
    try:
        nodes = [node.get("Resources", {}) for node in ray.nodes() if node.get("Alive")]
        refused = infeasible(needs, nodes)
        if refused:
            raise StudyError("cells no node of the Ray cluster can run: " + "; ".join(
                f"{cell_id} {why}" for cell_id, why in refused.items()))
        worker = ray.remote(max_retries=0)(run_cells_as_selection)
        workdir = os.getcwd()
        refs = [worker.options(**needs[cell.id].ray_options()).remote(
                    study_path, [cell.id], log_dir, set_id,
                    {k: v for k, v in resume.items() if k == cell.id}, 1, eval_kwargs,
                    workdir)
                for cell in cells]
        rows: list[dict[str, Any]] = []
        for result in ray.get(refs):
            rows.extend(result)
        return rows
    finally:
        if started_here:
            ray.shutdown()


def run_selected_cells(study: Study, study_path: str, cells: Sequence[Cell], log_dir: str,
                       executor: str, max_tasks: int | None,
                       eval_kwargs: dict[str, Any]) -> list[dict[str, Any]]:
    """Run ``cells`` as selected tasks of the eval set in ``log_dir`` (see module doc).

    Returns the workers' rows (one per cell). A cell whose worker died leaves its log
    ``started``; the next call resumes it from there.
    """
    from harness.factorial.resources import cell_resources

    directory = Path(log_dir)
    directory.mkdir(parents=True, exist_ok=True)
    set_id = eval_set_id(directory)

    def attempt(todo: Sequence[Cell], resume: Mapping[str, str]) -> list[dict[str, Any]]:
        if executor == "ray":
            needs = {cell.id: cell_resources(cell, study, _task_sandbox(cell)) for cell in todo}
            return _ray_run(study_path, todo, log_dir, set_id, resume, needs, eval_kwargs)
        return run_cells_as_selection(study_path, [c.id for c in todo], log_dir, set_id,
                                      resume, max_tasks, eval_kwargs)

    rows = attempt(cells, _resume_candidates(directory, cells))
    # A worker never fails a task on sample errors (the protocol forces fail_on_error off
    # and leaves the decision to the runner): retry each cell whose log finished with
    # errored samples by resuming from that log, which reuses its good samples and reruns
    # the errored ones, up to ``retry_attempts`` times as eval_set itself would.
    retries = int({**EVAL_DEFAULTS, **eval_kwargs}.get("retry_attempts") or 0)
    for _ in range(retries):
        errored = {row["cell_id"]: str(row["location"]) for row in rows
                   if row.get("status") == "success" and row.get("errored")
                   and row.get("location")}
        if not errored:
            break
        again = {row["cell_id"]: row
                 for row in attempt([c for c in cells if c.id in errored], errored)}
        rows = [again.get(row["cell_id"], row) for row in rows]
    order = {cell.id: i for i, cell in enumerate(study.cells())}
    _remove_superseded(directory, cells)
    _write_eval_set_info(directory, set_id, rows, order)
    from inspect_ai.log import write_log_dir_manifest

    write_log_dir_manifest(log_dir)
    return rows


def _task_sandbox(cell: Cell) -> Any:
    """The sandbox the cell's task declares (its own level, if any, wins later)."""
    if cell.sandbox is not None:
        return None
    from harness.factorial.cells import load_task

    return load_task(cell.task, cell.task_args).sandbox
