"""Method tasks: a paper whose method is not an LLM agent, run per sample as plain Python.

A *method task* is an Inspect task whose samples are cells (dataset x seed x
configuration) and whose solver runs a registered *plain method* on the cell's data; no
model is called (``--model none``). The paper's method and the baseline it beats are
levels of one factor, ``-T method=NAME``; ``-T baseline=NAME`` also runs the baseline on
the very same data (same seed) in the same sample, so each sample carries both values and
their difference, and the mean of the difference over samples is the paired comparison.

Three parts, each owned by a different package:

* the **problem** (the benchmark's, in ``benchmarks/paper_tasks/<name>/``): builds a cell's data
  from a seeded simulator in ``environments/`` (:meth:`MethodProblem.prepare` returns the
  method's inputs and the hidden truth) and scores a method's outputs against the truth
  (:meth:`MethodProblem.score`, the paper's metrics as floats);
* the **methods** (``methods/<name>/``), each registered with :func:`plain_method` under the
  problem's family: ``fn(inputs, config, seed) -> outputs``. A method sees only its inputs,
  never the truth, and imports no benchmark or environment;
* this **adapter**: :func:`method_task` builds the Task, :func:`method_solver` runs the
  method(s) and measures wall time and peak memory, :func:`method_metrics` reports them.

A method runs in process by default: wall time by ``perf_counter`` and peak memory as the
peak of traced allocations (``tracemalloc``, which sees numpy's buffers but not torch's).
``-T sandbox=bwrap`` runs it in the bwrap sandbox instead, under its limits (memory, CPU
time, no network), through :mod:`harness.method_worker`: the inputs go in as a pickle, the
outputs come back as JSON, and peak memory is the worker's maximum resident set size.

Score keys (scorer ``method_metrics``): every metric the problem reports, ``wall_s`` and
``peak_mb``; with a baseline also ``baseline_<metric>`` and ``delta_<metric>`` (method
minus baseline, per sample). :func:`summarise` turns logs into the paired table a README
reports (``python -m harness.method_tasks LOG_DIR``).
"""

from __future__ import annotations

import json
import math
import pickle
import sys
import tempfile
import time
import tracemalloc
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver

from harness.plugins.plain_method import MethodFn, method_names, plain_method, resolve_method
from harness.registry import Entry

__all__ = [
    "MethodFn",
    "MethodProblem",
    "MethodRun",
    "cell_id",
    "cell_sample",
    "method_metrics",
    "method_names",
    "method_solver",
    "method_task",
    "plain_method",
    "resolve_method",
    "run_method",
    "summarise",
]

_STORE_KEY = "method_task"


class MethodProblem(Protocol):
    """What a method task's benchmark supplies: data for a cell, and its scoring."""

    def prepare(self, cell: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
        """The method's inputs for ``cell`` and the truth they are scored against."""
        ...

    def score(
        self, outputs: Mapping[str, Any], truth: Any, cell: Mapping[str, Any]
    ) -> dict[str, float]:
        """The paper's metrics of one method's outputs on one cell."""
        ...


@dataclass(frozen=True)
class MethodRun:
    """One method's outputs on one cell, with what running it cost."""

    outputs: Mapping[str, Any]
    wall_s: float
    peak_mb: float


def run_method(fn: MethodFn, inputs: Mapping[str, Any], config: Mapping[str, Any],
               seed: int) -> MethodRun:
    """Run ``fn`` in process: wall time, and the peak of traced allocations (MiB)."""
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    start = time.perf_counter()
    try:
        outputs = fn(inputs, config, seed)
    finally:
        wall = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
        if not was_tracing:
            tracemalloc.stop()
    return MethodRun(dict(outputs), wall, max(peak - base, 0) / 2**20)


def cell_id(cell: Mapping[str, Any]) -> str:
    """A stable sample id from a cell's fields (``n=500,seed=3``), in the order given."""
    return ",".join(f"{k}={v}" for k, v in cell.items())


def cell_sample(cell: Mapping[str, Any], *, id: str | None = None) -> Sample:
    """One cell as an Inspect sample: the id is stable, the cell rides in metadata."""
    return Sample(id=id or cell_id(cell), input=json.dumps(dict(cell), sort_keys=True),
                  target="", metadata={"cell": dict(cell)})


# ----------------------------------------------------------------------------- sandbox


def _site_packages() -> str:
    import numpy

    return str(Path(numpy.__file__).resolve().parents[1])


def _repo_root() -> str:
    return str(Path(__file__).resolve().parents[1])


def sandbox_spec(memory: str = "4GiB", timeout_s: int = 600) -> tuple[str, str]:
    """The bwrap sandbox a method runs in: the system ``python3`` with this checkout and
    its site-packages on ``PYTHONPATH`` (read-only), single-threaded BLAS, no network.

    The config is a JSON file named after its content (Inspect hashes sandbox specs)."""
    paths = [_repo_root(), _site_packages()]
    config = {
        "timeout_s": timeout_s, "cpu_s": timeout_s, "memory_bytes": memory,
        "ro_binds": paths, "inspect_tools": False,
        "env": {"PYTHONPATH": ":".join(paths), "OPENBLAS_NUM_THREADS": "1",
                "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "MPLCONFIGDIR": "/tmp"},
    }
    text = json.dumps(config, sort_keys=True)
    path = Path(tempfile.gettempdir()) / f"method-bwrap-{zlib.crc32(text.encode()):08x}.json"
    if not path.exists():
        path.write_text(text, encoding="utf-8")
    return ("bwrap", str(path))


async def _run_in_sandbox(entry: Entry, inputs: Mapping[str, Any], config: Mapping[str, Any],
                          seed: int, timeout_s: int) -> MethodRun:
    from inspect_ai.util import sandbox

    fn = entry.load()
    target = f"{fn.__module__}:{fn.__qualname__}"
    payload = pickle.dumps({"target": target, "inputs": dict(inputs), "config": dict(config),
                            "seed": seed})
    box = sandbox()
    await box.write_file("method_in.pkl", payload)
    done = await box.exec(["python3", "-m", "harness.method_worker", "method_in.pkl",
                           "method_out.json"], timeout=timeout_s)
    if not done.success:
        raise RuntimeError(f"{entry.name} failed in the sandbox (rc {done.returncode}): "
                           f"{done.stderr[-2000:]}")
    result = json.loads(await box.read_file("method_out.json"))
    return MethodRun(result["outputs"], float(result["wall_s"]), float(result["peak_mb"]))


# ----------------------------------------------------------------------------- solver


@solver
def method_solver(
    family: str,
    problem: MethodProblem,
    method: str,
    baseline: str | None = None,
    config: Mapping[str, Any] | None = None,
    baseline_config: Mapping[str, Any] | None = None,
    in_sandbox: bool = False,
    timeout_s: int = 600,
) -> Solver:
    """Run plain method ``method`` (and ``baseline``) on each sample's cell and score it.

    The cell's data is built once; both methods get the same inputs and the cell's seed.
    The scores (the problem's metrics, wall time, peak memory) are kept in the sample's
    store for :func:`method_metrics`; nothing large enters the log.
    """
    entries_ = [(method, config or {})]
    if baseline:
        entries_.append((baseline, baseline_config or {}))
    resolved = [(resolve_method(family, name), cfg) for name, cfg in entries_]

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        cell = dict(state.metadata["cell"])
        inputs, truth = problem.prepare(cell)
        seed = int(cell.get("seed", 0))
        results: list[dict[str, float]] = []
        for entry, cfg in resolved:
            cfg = {**cfg, **cell.get("config", {})}
            if in_sandbox:
                run = await _run_in_sandbox(entry, inputs, cfg, seed, timeout_s)
            else:
                run = run_method(entry.load(), inputs, cfg, seed)
            scores = problem.score(run.outputs, truth, cell)
            results.append({**scores, "wall_s": run.wall_s, "peak_mb": run.peak_mb})
        values = dict(results[0])
        if len(results) > 1:
            for key, value in results[1].items():
                values[f"baseline_{key}"] = value
                values[f"delta_{key}"] = values[key] - value
        state.store.set(_STORE_KEY, values)
        state.metadata["methods"] = [entry.name for entry, _ in resolved]
        state.completed = True
        return state

    return solve


@scorer(metrics={"*": [mean(), stderr()]})
def method_metrics() -> Scorer:
    """The paper's metrics of the method (and baseline) on the sample's cell, as a dict."""

    async def score(state: TaskState, target: Target) -> Score:
        values = state.store.get(_STORE_KEY)
        if not values:
            raise RuntimeError("the method solver left no scores")
        clean = {k: float(v) for k, v in values.items() if v is not None and math.isfinite(v)}
        return Score(value=clean, explanation=", ".join(state.metadata.get("methods", [])))

    return score


def method_task(
    *,
    name: str,
    family: str,
    problem: MethodProblem,
    samples: Sequence[Sample],
    method: str,
    baseline: str | None,
    version: str,
    config: Mapping[str, Any] | None = None,
    baseline_config: Mapping[str, Any] | None = None,
    sandbox: str | None = None,
    timeout_s: int = 600,
    metadata: Mapping[str, Any] | None = None,
) -> Task:
    """A method task over cells (dataset x seed x configuration), one sample each.

    Args:
        name: The task's dataset name (its benchmark's name).
        family: The problem family its methods are registered under.
        problem: Builds each cell's data and scores a method's outputs.
        samples: One per cell (see :func:`cell_sample`): ``metadata["cell"]`` is the cell,
            its ``seed`` the methods' seed; an optional ``config`` mapping in it is passed to
            the methods (over ``config``).
        method: The plain method scored (``-T method=``).
        baseline: A second method run on the same data in the same sample, or None.
        version: ``Task(version=)``, equal to the benchmark's ``eval.yaml``.
        config: Fixed method settings; ``baseline_config`` the baseline's.
        sandbox: None (in process) or ``bwrap`` (the method runs under the sandbox limits).
        timeout_s: Per-method wall-clock limit in the sandbox.
        metadata: Extra task metadata.
    """
    if baseline in ("", "none"):
        baseline = None
    if sandbox in ("", "none"):
        sandbox = None
    if sandbox not in (None, "bwrap"):
        raise ValueError(f"sandbox must be none or bwrap, got {sandbox!r}")
    resolve_method(family, method)
    if baseline is not None:
        resolve_method(family, baseline)
    samples = list(samples)
    ids = [s.id for s in samples]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{name}: two cells have the same id")
    return Task(
        dataset=MemoryDataset(samples, name=name),
        solver=method_solver(family, problem, method, baseline, dict(config or {}),
                             dict(baseline_config or {}), sandbox == "bwrap", timeout_s),
        scorer=method_metrics(),
        sandbox=sandbox_spec(timeout_s=timeout_s) if sandbox == "bwrap" else None,
        version=version,
        metadata={"benchmark": name, "family": family, "method": method,
                  "baseline": baseline, **dict(metadata or {})},
    )


# ----------------------------------------------------------------------------- summary


def summarise(paths: str | Path | Sequence[str | Path], *, level: float = 0.95,
              keys: Sequence[str] | None = None, by: str | None = None) -> list[dict[str, Any]]:
    """Per task and metric: the method's mean, the baseline's and the paired difference,
    each with its CI (``harness.stats``), from method-task logs.

    A row per (task, metric); ``delta`` is method minus baseline over the samples that have
    both (the same cells, same seeds). Errored samples are left out and counted. ``by``
    names a cell field to split on (read from the ``field=value`` parts of sample ids).
    """
    import polars as pl

    from harness.results import read_results
    from harness.stats import mean_ci

    frame = read_results(paths if isinstance(paths, str | Path) else list(paths))
    frame = frame.filter(pl.col("scorer") == "method_metrics")
    part_of = (pl.col("sample_id").cast(pl.Utf8).str.extract(rf"(?:^|,){by}=([^,]+)")
               if by is not None else pl.lit(""))
    frame = frame.with_columns(part_of.fill_null("").alias("_by"))
    frame = frame.sort([pl.col("_by").cast(pl.Float64, strict=False), "_by"])
    rows: list[dict[str, Any]] = []
    for (task, part), group in frame.group_by(["task", "_by"], maintain_order=True):
        wide = group.with_columns(pl.col("score_key").str.split("/").list.last().alias("k"))
        metrics = sorted({k for k in wide["k"].unique().to_list()
                          if not k.startswith(("baseline_", "delta_"))})
        for metric in metrics:
            if keys is not None and metric not in keys:
                continue
            row: dict[str, Any] = {"task": task if by is None else f"{task} {by}={part}",
                                   "metric": metric}
            for label, key in (("method", metric), ("baseline", f"baseline_{metric}"),
                               ("delta", f"delta_{metric}")):
                values = wide.filter(pl.col("k") == key)["score_value"].drop_nulls()
                if values.len() >= 2:
                    est = mean_ci(values.to_numpy(), level=level)
                    row[label] = (est.estimate, est.lo, est.hi, est.n)
            errors = group.filter(pl.col("error").is_not_null())["sample_id"].n_unique()
            row["errored"] = errors
            rows.append(row)
    return rows


def growth(paths: str | Path | Sequence[str | Path], x: str, y: str) -> list[dict[str, Any]]:
    """How score ``y`` grows with score ``x`` (e.g. fit time with basis size), per task and
    role (method, baseline): the least-squares exponent of ``y ~ a x^b`` (log-log) and the
    R^2 of the two rival curves ``y ~ a + b log x`` and ``y ~ a + b x``. Descriptive curve
    fits on per-sample values; the intervals of the per-size means come from
    :func:`summarise` (``--by``).
    """
    import numpy as np
    import polars as pl

    from harness.results import read_results

    frame = read_results(paths if isinstance(paths, str | Path) else list(paths))
    frame = frame.filter(pl.col("scorer") == "method_metrics").with_columns(
        pl.col("score_key").str.split("/").list.last().alias("k"))
    out: list[dict[str, Any]] = []
    for (task,), group in frame.group_by(["task"], maintain_order=True):
        for role, prefix in (("method", ""), ("baseline", "baseline_")):
            wide = (group.filter(pl.col("k").is_in([prefix + x, prefix + y]))
                    .pivot(on="k", index=["log_file", "sample_id"], values="score_value")
                    .drop_nulls())
            if prefix + x not in wide.columns or wide.height < 3:
                continue
            xs = wide[prefix + x].to_numpy().astype(float)
            ys = wide[prefix + y].to_numpy().astype(float)
            keep = (xs > 0) & (ys > 0)
            xs, ys = xs[keep], ys[keep]

            def r2(feature: Any, ys: Any = ys) -> float:
                design = np.column_stack([np.ones_like(feature), feature])
                coef, *_ = np.linalg.lstsq(design, ys, rcond=None)
                resid = ys - design @ coef
                return float(1 - resid @ resid / ((ys - ys.mean()) @ (ys - ys.mean())))

            exponent = float(np.polyfit(np.log(xs), np.log(ys), 1)[0])
            out.append({"task": task, "role": role, "x": x, "y": y, "n": int(len(xs)),
                        "exponent": exponent, "r2_log": r2(np.log(xs)), "r2_linear": r2(xs)})
    return out


def study_pairs(paths: str | Path | Sequence[str | Path], *, factor: str = "scale",
                role: str = "role", levels: tuple[str, str] = ("paper", "baseline"),
                metric: str = "loss", level: float = 0.95) -> list[dict[str, Any]]:
    """A method-task study's paired table: per task and level of ``factor``, the mean of
    ``metric`` under each of the two ``role`` levels and their paired difference over the
    cells both ran (``harness.stats.paired_difference``; the study blocks on item).

    Factor levels come from the study engine's own reader
    (:func:`harness.factorial.report.frame.study_frame`); samples that errored are left out
    of the means and counted in ``errored``.
    """
    import polars as pl

    from harness.factorial.report.frame import study_frame
    from harness.stats import mean_ci, paired_difference

    frame = study_frame(paths if isinstance(paths, str | Path) else list(paths))
    frame = frame.filter((pl.col("scorer") == "method_metrics")
                         & (pl.col("score_key").str.split("/").list.last() == metric))
    frame = frame.with_columns(pl.col(factor).alias(f"_{factor}"), pl.col(role).alias(f"_{role}"))
    rows: list[dict[str, Any]] = []
    for (task, part), group in frame.group_by(["task", f"_{factor}"], maintain_order=True):
        errored = group.filter(pl.col("error").is_not_null())
        kept = group.filter(pl.col("error").is_null() & pl.col("score_value").is_not_null())
        row: dict[str, Any] = {"task": task, factor: part, "errored": errored.height}
        for name in levels:
            values = kept.filter(pl.col(f"_{role}") == name)["score_value"].to_numpy()
            if len(values) >= 2:
                est = mean_ci(values, level=level)
                row[name] = (est.estimate, est.lo, est.hi, est.n)
        if all(name in row for name in levels):
            est, unpaired = paired_difference(kept, f"_{role}", "score_value", "sample_id",
                                              levels=levels, level=level)
            row["delta"] = (est.estimate, est.lo, est.hi, est.n)
            row["unpaired"] = unpaired.height
        rows.append(row)
    return sorted(rows, key=lambda r: (r["task"], _as_number(r[factor]), str(r[factor])))


def _as_number(value: Any) -> float:
    """A factor level as a number for sorting (``rtn4``-style labels sort after numbers)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.inf


def study_markdown(rows: Sequence[Mapping[str, Any]], factor: str = "scale",
                   levels: tuple[str, str] = ("paper", "baseline")) -> str:
    """The rows of :func:`study_pairs` as a Markdown table."""
    lines = [f"| task | {factor} | n | {levels[0]} | {levels[1]} | "
             f"{levels[0]} - {levels[1]} (paired) | errored |", "|---|---|---|---|---|---|---|"]
    for row in rows:
        n = (row.get("delta") or (0, 0, 0, 0))[3]
        lines.append(f"| {row['task']} | {row[factor]} | {n} | {_fmt(row.get(levels[0]))} | "
                     f"{_fmt(row.get(levels[1]))} | {_fmt(row.get('delta'))} | "
                     f"{row['errored']} |")
    return "\n".join(lines)


def _fmt(cell: tuple[float, float, float, int] | None) -> str:
    if cell is None:
        return ""
    est, lo, hi, _ = cell
    return f"{est:.4g} [{lo:.4g}, {hi:.4g}]"


def summary_markdown(rows: Sequence[Mapping[str, Any]]) -> str:
    """The rows of :func:`summarise` as a Markdown table."""
    lines = ["| task | metric | n | method | baseline | method - baseline (paired) |",
             "|---|---|---|---|---|---|"]
    for row in rows:
        n = (row.get("method") or (0, 0, 0, 0))[3]
        lines.append(f"| {row['task']} | {row['metric']} | {n} | {_fmt(row.get('method'))} | "
                     f"{_fmt(row.get('baseline'))} | {_fmt(row.get('delta'))} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m harness.method_tasks [--by FIELD] [--keys a,b] LOG [LOG...]``: the paired
    table of method tasks."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m harness.method_tasks")
    parser.add_argument("logs", nargs="+")
    parser.add_argument("--by", default=None, help="a cell field to split on (e.g. m)")
    parser.add_argument("--keys", default=None, help="comma-separated metrics to show")
    parser.add_argument("--study", default=None, metavar="FACTOR",
                        help="a study's logs: paper vs baseline (factor role) per level of "
                        "FACTOR (e.g. scale), paired on the cells")
    parser.add_argument("--growth", default=None, metavar="X:Y",
                        help="fit how score Y grows with score X (e.g. m_used:fit_s)")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.study:
        print(study_markdown(study_pairs(args.logs, factor=args.study), args.study))
        return 0
    if args.growth:
        x, _, y = args.growth.partition(":")
        print("| task | role | n | exponent of y ~ x^b | R^2 (a + b log x) | R^2 (a + b x) |")
        print("|---|---|---|---|---|---|")
        for g in growth(args.logs, x, y):
            print(f"| {g['task']} | {g['role']} | {g['n']} | {g['exponent']:.3f} | "
                  f"{g['r2_log']:.3f} | {g['r2_linear']:.3f} |")
        return 0
    keys = args.keys.split(",") if args.keys else None
    print(summary_markdown(summarise(args.logs, keys=keys, by=args.by)))
    return 0


if __name__ == "__main__":
    from harness.errors import guarded

    raise SystemExit(guarded(main))
