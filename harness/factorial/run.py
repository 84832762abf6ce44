"""Run a study: its cells through Inspect's ``eval_set``, one log dir per study, resumable.

Every cell becomes one Inspect task whose log carries the cell in its ``metadata``
(``{"study", "cell_id", "factors": {factor: level}}``) and in its tags (``factor=level``),
so ``harness.results`` can put factor levels in the frame without any side file.

Why resuming works: ``eval_set`` pairs each task with the logs already in its log dir by a
task identifier (task file and name, recorded task args, model, model args, solver plan,
generate config, version, limits). A cell's task is rebuilt the same way on every run,
and the only cell ingredient that is not part of that identity (the dataset changed by
an intervention) is added to the recorded task args by
:func:`harness.factorial.interventions.apply_intervention`. So a rerun skips successful
cells, resumes a cell whose log was interrupted (keeping its finished samples) and runs
the cells that never started.

    plan(load_study("study.yaml"))                       # cells, samples, estimate
    run_study("study.yaml")                              # logs/studies/<name>/
    run_study("study.yaml", executor="ray")              # one Ray task per cell

Who does what: :mod:`harness.factorial.cells` builds a cell's task; each evaluation stack
(the ``stack`` factor: ``inspect``, ``lm-eval``) is a runner registered by name
(:mod:`harness.plugins.stack`); this module plans, skips the cells already done and
hands each stack its cells.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# the built-in stacks register themselves (``inspect``, ``lm-eval``) on import
from harness.atomic import write_text
from harness.factorial import inspect_stack as _inspect_stack  # noqa: F401
from harness.factorial import lmeval_stack as _lmeval_stack  # noqa: F401
from harness.factorial.cells import build_task, load_task
from harness.factorial.resources import Resources, cell_resources
from harness.factorial.study import STUDY_COPY, Cell, Study, StudyError, load_study
from harness.plugins.stack import Executor, StackJob, StackRunner, get_stack, stack_names

__all__ = [
    "CellPlan",
    "Executor",
    "Plan",
    "RunSummary",
    "STUDY_COPY",
    "build_task",
    "cell_status",
    "default_log_dir",
    "plan",
    "run_study",
]

# (tokens per sample, seconds per sample) by model provider, for planning before any log
# exists. scripted: measured on the arithmetic task (~20 ms of Inspect CPU per sample);
# embedded: SmolLM2-135M at ~60 tok/s; others: a cautious guess for a remote API.
RATES: dict[str, tuple[float, float]] = {
    "scripted": (120.0, 0.05),
    "mockllm": (50.0, 0.05),
    "embedded": (350.0, 2.0),
    "whitebox": (350.0, 8.0),
    "hf": (400.0, 8.0),
    "vllm": (600.0, 0.5),
}
DEFAULT_RATE = (800.0, 5.0)


def default_log_dir(study: Study, run: str = "main") -> Path:
    """Where a run writes when no ``--log-dir`` is given: ``<study>/logs/<run>/`` for a
    study folder (the run writes where it is committed; no copy step), else
    ``logs/studies/<study name>/`` (relative to the working directory)."""
    return study.run_dir(run)


def _check_stacks(study: Study, cells: Sequence[Cell]) -> None:
    """Every cell's stack is a registered one (before anything is planned or run)."""
    unknown = sorted({c.stack for c in cells} - set(stack_names()))
    if unknown:
        raise StudyError(
            f"{study.source or study.name}: unknown stack {', '.join(map(repr, unknown))}; "
            f"registered: {', '.join(stack_names()) or 'none'}"
        )


def check_parts(study: Study) -> None:
    """Every intervention and solver a level names resolves now, so ``--dry-run`` fails
    where the run would (an unknown name used to pass the plan and fail mid-run, without
    the file or line). Tasks are loaded by :func:`plan` (to count samples) and by the run.

    Raises:
        StudyError: ``file:line: factors[i].levels[j]: <why>``, one line per problem.
    """
    from harness.factorial.cells import ensure_registry, resolve_solver
    from harness.factorial.interventions import get_intervention
    from harness.factorial.study import study_location

    ensure_registry()
    problems: list[str] = []
    for i, factor in enumerate(study.factors):
        for j, level in enumerate(factor.levels):
            value = level.value
            try:
                if factor.binds_to == "intervention":
                    name = value.get("name", "none") if isinstance(value, dict) else value
                    get_intervention("none" if name is None else str(name))
                elif factor.binds_to == "solver" and value is not None:
                    resolve_solver(value)
            except Exception as exc:  # the registry's own message names what is known
                problems.append(study_location(study, ("factors", i, "levels", j),
                                               f"{factor.binds_to} level {level.label!r}: "
                                               f"{exc}"))
    if problems:
        raise StudyError("\n".join(problems))


# --------------------------------------------------------------------------- planning


@dataclass(frozen=True)
class CellPlan:
    """One cell in a plan: its id, levels, samples to run and the estimate for them."""

    cell_id: str
    levels: dict[str, str]
    model: str | None
    stack: str
    samples: int
    est_tokens: float
    est_seconds: float
    done: bool = False
    resources: Resources | None = None
    """What the cell reserves on the Ray executor (:mod:`harness.factorial.resources`)."""


@dataclass(frozen=True)
class Plan:
    """What a study will run: cells, sample count and an estimate of tokens and time.

    ``est_seconds`` is serial time (sum over cells); cells run in parallel where the
    executor allows, so wall time is lower. ``rates_from`` says whether the estimate came
    from earlier logs in the study dir or from the built-in :data:`RATES` table.
    """

    study: str
    log_dir: str
    cells: list[CellPlan]
    samples: int
    est_tokens: float
    est_seconds: float
    rates_from: str
    mdd: float | None = None
    mdd_note: str = ""

    def table(self) -> str:
        """A plain-text table for the CLI's ``--dry-run``."""
        head = f"{'cell':<12} {'done':<5} {'samples':>7} {'tokens':>9} {'seconds':>8}  levels"
        lines = [head]
        for c in self.cells:
            levels = " ".join(f"{k}={v}" for k, v in c.levels.items())
            lines.append(f"{c.cell_id:<12} {'yes' if c.done else 'no':<5} {c.samples:>7} "
                         f"{c.est_tokens:>9.0f} {c.est_seconds:>8.1f}  {levels}"
                         + (f"  [{_resource_text(c.resources)}]" if c.resources else ""))
        lines.append(f"{len(self.cells)} cells, {self.samples} samples, "
                     f"~{self.est_tokens:.0f} tokens, ~{self.est_seconds:.0f} s serial "
                     f"(rates from {self.rates_from})")
        if self.mdd is not None:
            lines.append(f"minimum detectable difference: {self.mdd:.3f} ({self.mdd_note})")
        return "\n".join(lines)


def _resource_text(resources: Resources) -> str:
    """``cpu=1 gpu=0 mem=2GiB``: a cell's reservation in the dry-run table."""
    memory = "-" if resources.memory is None else f"{resources.memory / 2**30:g}GiB"
    return f"cpu={resources.num_cpus:g} gpu={resources.num_gpus:g} mem={memory}"


def _provider(model: str | None) -> str:
    return (model or "").split("/", 1)[0]


def _rates_from_logs(log_dir: Path) -> dict[str, tuple[float, float]]:
    """Mean tokens and seconds per sample by model, from the study's earlier logs."""
    if not log_dir.is_dir():
        return {}
    import polars as pl

    from harness.results import read_results

    frame = read_results(log_dir)
    if frame.is_empty():
        return {}
    per_sample = frame.unique(["log_file", "sample_id", "epoch"]).filter(
        pl.col("error").is_null()
    )
    rates = per_sample.group_by("model").agg(
        pl.col("total_tokens").mean().alias("tokens"),
        pl.col("total_time").mean().alias("seconds"),
    )
    return {
        str(row["model"]): (float(row["tokens"] or 0.0), float(row["seconds"] or 0.0))
        for row in rates.iter_rows(named=True)
    }


def _dataset_size(cell: Cell, cache: dict[str, int],
                  sandboxes: dict[str, Any] | None = None) -> int:
    """Samples in the cell's task (loaded once per task and args); ``sandboxes`` collects
    the task's own sandbox under the same key, for the cell's resources."""
    key = json.dumps([cell.task, cell.task_args], sort_keys=True, default=str)
    if key not in cache:
        task = load_task(cell.task, cell.task_args)
        cache[key] = len(task.dataset)
        if sandboxes is not None:
            sandboxes[key] = task.sandbox
    return cache[key]


def plan(study: Study, log_dir: str | Path | None = None) -> Plan:
    """Plan a study without running anything: cells, samples, estimated tokens and time.

    Tasks are constructed (to count their samples) but never evaluated.
    """
    directory = Path(log_dir) if log_dir is not None else default_log_dir(study)
    study_cells = study.cells()
    _check_stacks(study, study_cells)
    check_parts(study)
    observed = _rates_from_logs(directory)
    done = cell_status(directory)
    sizes: dict[str, int] = {}
    sandboxes: dict[str, Any] = {}
    cells: list[CellPlan] = []
    for cell in study_cells:
        n = _dataset_size(cell, sizes, sandboxes)
        key = json.dumps([cell.task, cell.task_args], sort_keys=True, default=str)
        if study.limit is not None:
            n = min(n, study.limit)
        samples = n * study.replicates.epochs
        tokens, seconds = observed.get(
            cell.model or "", RATES.get(_provider(cell.model), DEFAULT_RATE)
        )
        cells.append(CellPlan(cell.id, dict(cell.levels), cell.model, cell.stack, samples,
                              samples * tokens, samples * seconds,
                              done.get(cell.id) == "success",
                              cell_resources(cell, study, sandboxes.get(key))))
    n_items = min((c.samples // max(study.replicates.epochs, 1) for c in cells), default=0)
    mdd, note = planned_mdd(directory, n_items, study.replicates.epochs)
    return Plan(
        study=study.name, log_dir=str(directory), cells=cells,
        samples=sum(c.samples for c in cells),
        est_tokens=sum(c.est_tokens for c in cells),
        est_seconds=sum(c.est_seconds for c in cells),
        rates_from="earlier logs" if observed else "built-in table",
        mdd=mdd, mdd_note=note,
    )


def planned_mdd(log_dir: Path, n_items: int, epochs: int, alpha: float = 0.05,
                power: float = 0.8) -> tuple[float | None, str]:
    """The minimum detectable paired difference between two models for ``n_items`` items.

    From pilot data when the study dir has logs (the SD of per-item differences between
    the two best levels of the ``model`` factor), else the conservative 0/1 value (p = 0.5,
    no correlation between models, ``epochs`` epochs per item).
    """
    from harness.stats import binary_sd_diff, minimum_detectable_difference

    if n_items < 2:
        return None, "fewer than two items"
    sd, source = None, ""
    if log_dir.is_dir():
        sd, source = _pilot_sd(log_dir)
    if sd is None:
        sd = binary_sd_diff(epochs=epochs)
        source = f"no pilot logs: assumes 0/1 scores at p = 0.5, uncorrelated, {epochs} epoch(s)"
    mdd = minimum_detectable_difference(n_items, sd, alpha=alpha, power=power)
    return mdd, (f"paired t over {n_items} items, alpha {alpha}, power {power}, "
                 f"sd of per-item differences {sd:.3f} from {source}")


def _pilot_sd(log_dir: Path) -> tuple[float | None, str]:
    """SD of per-item differences between the two best ``model`` levels in earlier logs."""
    import polars as pl

    from harness.factorial.report.frame import study_frame

    try:
        frame = study_frame(log_dir)
    except Exception:  # unreadable pilot logs: plan without them
        return None, ""
    if "model" not in frame.columns or frame.is_empty():
        return None, ""
    scored = frame.filter(pl.col("model").is_not_null() & pl.col("score_value").is_not_null())
    means = scored.group_by("model").agg(pl.col("score_value").mean()).sort(
        "score_value", descending=True)
    if means.height < 2:
        return None, ""
    a, b = means.get_column("model").to_list()[:2]
    wide = (scored.filter(pl.col("model").is_in([a, b]))
            .group_by(["sample_id", "model"]).agg(pl.col("score_value").mean())
            .pivot(on="model", index="sample_id", values="score_value").drop_nulls())
    if wide.height < 2:
        return None, ""
    d = (wide.get_column(a) - wide.get_column(b)).to_numpy()
    sd = float(d.std(ddof=1))
    return (sd, f"pilot logs ({a} vs {b}, {wide.height} items)") if sd > 0 else (None, "")


# --------------------------------------------------------------------------- status


def cell_status(log_dir: str | Path) -> dict[str, str]:
    """Best status of each cell id found in the log dir's headers (``success`` wins).

    Searched recursively: Ray runs before the selection protocol wrote each cell into its
    own sub-folder (now every cell writes into the one flat dir).
    """
    directory = Path(log_dir)
    if not directory.is_dir():
        return {}
    from harness.results import read_headers

    rank = {"success": 3, "started": 2, "cancelled": 1, "error": 1}
    status: dict[str, str] = {}
    for row in read_headers(directory).iter_rows(named=True):
        cell_id = json.loads(row["eval_metadata"] or "{}").get("cell_id")
        if cell_id is None:
            continue
        current = status.get(cell_id)
        if current is None or rank.get(row["status"], 0) > rank.get(current, 0):
            status[cell_id] = row["status"]
    return status


def _log_files(log_dir: Path) -> set[str]:
    from harness.results import list_logs

    return {str(p.relative_to(log_dir)) for p in list_logs(log_dir)}


# --------------------------------------------------------------------------- running


@dataclass
class RunSummary:
    """The outcome of one ``run_study`` call.

    ``ran`` are the cells evaluated by this call (started or resumed), ``skipped`` those
    already complete; ``new_logs`` the log files this call created.
    """

    study: str
    log_dir: str
    executor: str
    dry_run: bool
    cells: int
    ran: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    new_logs: list[str] = field(default_factory=list)
    seconds: float = 0.0
    plan: Plan | None = None

    @property
    def success(self) -> bool:
        """True when every cell of the study has a successful log."""
        return not self.failed and len(self.ran) + len(self.skipped) == self.cells


def run_study(
    study_path: str | Path,
    log_dir: str | Path | None = None,
    dry_run: bool = False,
    executor: Executor = "local",
    max_tasks: int | None = None,
    run: str = "main",
    **eval_kwargs: Any,
) -> RunSummary:
    """Run (or resume) every cell of a study; only missing or failed cells are evaluated.

    Args:
        study_path: The study YAML file.
        log_dir: Where logs go (default :func:`default_log_dir`: ``<study>/logs/<run>/``
            for a study folder); one dir per run.
        dry_run: Plan only (cells, samples, estimate); nothing is evaluated.
        executor: ``local`` (one ``eval_set`` over all cells, ``max_tasks`` in parallel) or
            ``ray`` (one Ray task per cell, local Ray started if none is running).
        max_tasks: Cells evaluated in parallel by the local executor (default: Inspect's).
        run: The declared run to write (``main`` by default); names its log folder.
        **eval_kwargs: Passed to ``eval_set`` (e.g. ``max_samples``, ``display``).
    """
    study = load_study(study_path)
    directory = Path(log_dir) if log_dir is not None else default_log_dir(study, run)
    cells = study.cells()
    _check_stacks(study, cells)
    check_parts(study)
    if executor not in ("local", "ray"):
        raise ValueError(f"executor must be 'local' or 'ray', got {executor!r}")
    summary = RunSummary(study=study.name, log_dir=str(directory), executor=executor,
                         dry_run=dry_run, cells=len(cells))
    if dry_run:
        summary.plan = plan(study, directory)
        return summary

    start = time.monotonic()
    directory.mkdir(parents=True, exist_ok=True)
    # the study travels with its logs, so a report can honour its analysis options and
    # causal graph without being told where the YAML was
    copy = directory / STUDY_COPY
    source = Path(study_path).read_text()
    if not copy.exists() or copy.read_text() != source:
        write_text(copy, source)  # atomically: a kill never leaves half a study file
    before = _log_files(directory)
    status = cell_status(directory)
    todo = [c for c in cells if status.get(c.id) != "success"]
    summary.skipped = [c.id for c in cells if status.get(c.id) == "success"]
    summary.ran = [c.id for c in todo]

    by_stack: dict[str, list[Cell]] = {}
    for cell in todo:
        by_stack.setdefault(cell.stack, []).append(cell)
    runners: dict[str, StackRunner] = {name: get_stack(name) for name in by_stack}
    job = StackJob(study=study, study_path=str(study_path), log_dir=str(directory),
                   executor=executor, max_tasks=max_tasks, eval_kwargs=dict(eval_kwargs))
    for name, stack_cells in by_stack.items():
        runners[name].run(stack_cells, job)

    after = cell_status(directory)
    summary.failed = [c.id for c in todo if after.get(c.id) != "success"]
    summary.new_logs = sorted(_log_files(directory) - before)
    summary.seconds = time.monotonic() - start
    return summary
