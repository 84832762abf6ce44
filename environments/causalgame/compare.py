"""A run next to the published CausalGame leaderboard, cell by cell.

    python -m environments.causalgame.compare LOGDIR --leaderboard leaderboard.json \\
        [--mode agentic|prompting] [--model deepseek-v4-pro] [--rubric rubric.json] [--json]

The logic here is pure: functions over plain episode rows (``scenario``, ``trial``,
``survival`` in [0, 1] or None for N/A, ``failure_mode``) and the leaderboard's JSON
(``leaderboard.json`` of CausalGame/causalgame.github.io: ``meta.scenarios``,
``meta.baselines``, ``modes.<mode>.rows[].{model, display, avg, scenarios.<id>.{mean, std,
ci95}}``). Statistics are the leaderboard's own (``meta.ci_note``): per cell the mean of
its trials, the sample standard deviation and the 95% Student-t half-width
``t(0.975, n-1) * s / sqrt(n)`` (n = 3: 2.484 s), missing with fewer than 3 trials; per
model the mean of the 14 cell means, and std/CI over the trials' 14-scenario means. N/A
episodes (no submission) leave every mean and are counted per cell.

Only the ``__main__`` path reads logs, through ``harness.results`` (the suite's one log
reader); that one import is this module's CLI shell and is declared as an ignored edge of
the "environments" import contract in pyproject.toml.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from environments.causalgame.rubric import PATTERNS, mode_distribution

# t(0.975, df) for small df (the leaderboard's cells have n = 3); larger df use scipy
_T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
         9: 2.262, 10: 2.228}
MIN_TRIALS_FOR_CI = 3  # "missing std/CI = fewer than 3 distinct values reported"
Row = Mapping[str, Any]


class LeaderboardError(ValueError):
    """The JSON does not have the leaderboard's shape."""


def t975(df: int) -> float:
    """Two-sided 95% Student-t quantile."""
    if df in _T975:
        return _T975[df]
    from scipy.stats import t

    return float(t.ppf(0.975, df))


def load_leaderboard(source: str | Path | Mapping[str, Any]) -> dict[str, Any]:
    """The leaderboard JSON (a path or the parsed object), checked for the fields used."""
    data = (
        dict(source) if isinstance(source, Mapping)
        else json.loads(Path(source).read_text(encoding="utf-8"))
    )
    meta, modes = data.get("meta"), data.get("modes")
    if not isinstance(meta, dict) or not isinstance(modes, dict):
        raise LeaderboardError("leaderboard JSON needs 'meta' and 'modes' objects")
    if not isinstance(meta.get("scenarios"), list):
        raise LeaderboardError("leaderboard JSON needs meta.scenarios (a list)")
    for name, mode in modes.items():
        rows = mode.get("rows") if isinstance(mode, dict) else None
        if not isinstance(rows, list):
            raise LeaderboardError(f"modes.{name}.rows must be a list")
        for row in rows:
            if not isinstance(row, dict) or "model" not in row or "scenarios" not in row:
                raise LeaderboardError(f"modes.{name}.rows[] need 'model' and 'scenarios'")
    return data


def cell_stats(values: Sequence[float | None]) -> dict[str, Any]:
    """One cell in percent: mean, std, ci95 over its submitted trials, and its N/A count."""
    ok = [100.0 * float(v) for v in values if v is not None and math.isfinite(float(v))]
    n = len(ok)
    out: dict[str, Any] = {"mean": None, "std": None, "ci95": None, "n": n,
                           "n_na": len(values) - n}
    if n:
        out["mean"] = round(float(np.mean(ok)), 2)
    if n >= MIN_TRIALS_FOR_CI:
        s = float(np.std(ok, ddof=1))
        out["std"] = round(s, 2)
        out["ci95"] = round(t975(n - 1) * s / math.sqrt(n), 2)
    return out


def run_stats(rows: Iterable[Row]) -> dict[str, Any]:
    """Per-scenario cells and the per-model average of a run, as the leaderboard reports.

    ``rows``: one per episode with ``scenario``, ``trial`` (epoch) and ``survival`` (a
    fraction, None for N/A).
    """
    by_cell: dict[str, dict[int, float | None]] = {}
    for r in rows:
        by_cell.setdefault(str(r["scenario"]), {})[int(r.get("trial") or 1)] = r.get("survival")
    scenarios = {sid: cell_stats(list(trials.values())) for sid, trials in by_cell.items()}
    trials = sorted({t for cell in by_cell.values() for t in cell})
    per_trial = []
    for t in trials:
        vals = [cell[t] for cell in by_cell.values() if cell.get(t) is not None]
        if vals:
            per_trial.append(100.0 * float(np.mean([float(v) for v in vals if v is not None])))
    means = [c["mean"] for c in scenarios.values() if c["mean"] is not None]
    avg: dict[str, Any] = {
        "mean": round(float(np.mean(means)), 2) if means else None,
        "std": None, "ci95": None,
        "n_cells": len(means), "n_scenarios": len(scenarios),
        "n_episodes": sum(c["n"] + c["n_na"] for c in scenarios.values()),
        "n_na": sum(c["n_na"] for c in scenarios.values()),
    }
    if len(per_trial) >= MIN_TRIALS_FOR_CI:
        s = float(np.std(per_trial, ddof=1))
        avg["std"] = round(s, 2)
        avg["ci95"] = round(t975(len(per_trial) - 1) * s / math.sqrt(len(per_trial)), 2)
    return {"scenarios": scenarios, "avg": avg}


def _cell(row: Mapping[str, Any], sid: str) -> dict[str, Any] | None:
    cell = (row.get("scenarios") or {}).get(sid)
    return cell if isinstance(cell, dict) and cell.get("mean") is not None else None


def nearest_row(stats: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The published row closest to the run: mean absolute difference over shared cells."""
    best: dict[str, Any] = {}
    for row in rows:
        diffs = [
            abs(float(mine["mean"]) - float(pub["mean"]))
            for sid, mine in stats["scenarios"].items()
            if mine["mean"] is not None and (pub := _cell(row, sid)) is not None
        ]
        if diffs and (not best or float(np.mean(diffs)) < best["mad"]):
            best = {"model": row["model"], "display": row.get("display", row["model"]),
                    "mad": float(np.mean(diffs)), "cells": len(diffs)}
    return best


def baselines(leaderboard: Mapping[str, Any]) -> dict[str, Any]:
    """The leaderboard's baselines by name (survival, or a min-max range)."""
    out: dict[str, Any] = {}
    for b in leaderboard["meta"].get("baselines") or []:
        if "survival" in b:
            out[b["name"]] = float(b["survival"])
        elif "survival_min" in b:
            out[b["name"]] = [float(b["survival_min"]), float(b["survival_max"])]
    return out


def compare(
    rows: Iterable[Row],
    leaderboard: Mapping[str, Any],
    mode: str = "agentic",
    model: str | None = None,
    rubric: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The run's cells next to a published row (``model``, or the nearest one) and the
    published baselines; with ``rubric`` (rubric.json), the run's failure patterns next to
    the published distribution of ``mode``."""
    rows = list(rows)
    if mode not in leaderboard["modes"]:
        known = list(leaderboard["modes"])
        raise LeaderboardError(f"no mode {mode!r}; the leaderboard has {known}")
    published = leaderboard["modes"][mode]["rows"]
    stats = run_stats(rows)
    near = nearest_row(stats, published)
    chosen_id = model or near.get("model")
    chosen = next((r for r in published if r["model"] == chosen_id), None)
    if model is not None and chosen is None:
        raise LeaderboardError(f"no row {model!r} in mode {mode!r}")
    order = [s["id"] for s in leaderboard["meta"]["scenarios"]]
    order += [s for s in stats["scenarios"] if s not in order]
    cells = []
    for sid in order:
        mine = stats["scenarios"].get(sid)
        pub = _cell(chosen, sid) if chosen else None
        entry: dict[str, Any] = {"scenario": sid, "run": mine, "published": pub,
                                 "delta": None, "overlap": None}
        if mine and mine["mean"] is not None and pub is not None:
            entry["delta"] = round(float(mine["mean"]) - float(pub["mean"]), 2)
            if mine["ci95"] is not None and pub.get("ci95") is not None:
                entry["overlap"] = bool(
                    abs(entry["delta"]) <= float(mine["ci95"]) + float(pub["ci95"])
                )
        cells.append(entry)
    out: dict[str, Any] = {
        "mode": mode,
        "run": stats["avg"],
        "published_row": (
            {"model": chosen["model"], "display": chosen.get("display"), "avg": chosen.get("avg")}
            if chosen else None
        ),
        "nearest_row": near or None,
        "baselines": baselines(leaderboard),
        "cells": cells,
    }
    if rubric is not None:
        modes = [str(r["failure_mode"]) for r in rows if r.get("failure_mode")]
        dist = (rubric.get("distribution") or {}).get(mode) or {}
        out["failure_modes"] = {
            "run": mode_distribution(modes),
            "published": {p: (dist.get("patterns") or {}).get(p, {}).get("pct") for p in PATTERNS},
            "published_total": dist.get("total"),
        }
    return out


def _fmt(value: Any, digits: int = 1) -> str:
    return "—" if value is None else f"{float(value):.{digits}f}"


def to_markdown(result: Mapping[str, Any]) -> str:
    """The comparison as Markdown tables."""
    row = result.get("published_row") or {}
    name = row.get("display") or row.get("model") or "—"
    run = result["run"]
    lines = [
        f"Mode `{result['mode']}`; published row: {name} (avg "
        f"{_fmt((row.get('avg') or {}).get('mean'))}); nearest row: "
        f"{(result.get('nearest_row') or {}).get('display', '—')}.",
        f"Run: mean {_fmt(run['mean'])} ± {_fmt(run['ci95'])} over {run['n_cells']} cells, "
        f"{run['n_episodes']} episodes, {run['n_na']} N/A.",
        "Baselines: " + ", ".join(
            f"{k} {v[0]:g}–{v[1]:g}" if isinstance(v, list) else f"{k} {v:g}"
            for k, v in result["baselines"].items()
        ) + ".",
        "",
        f"| scenario | run mean | ± ci95 | n | N/A | {name} | ± ci95 | delta | CIs overlap |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in result["cells"]:
        mine, pub = c["run"] or {}, c["published"] or {}
        overlap = "—" if c["overlap"] is None else ("yes" if c["overlap"] else "no")
        lines.append(
            f"| {c['scenario']} | {_fmt(mine.get('mean'))} | {_fmt(mine.get('ci95'))} | "
            f"{mine.get('n', 0)} | {mine.get('n_na', 0)} | {_fmt(pub.get('mean'))} | "
            f"{_fmt(pub.get('ci95'))} | {_fmt(c['delta'])} | {overlap} |"
        )
    fm = result.get("failure_modes")
    if fm:
        lines += ["", "| pattern | run % | run n | published % |", "|---|---|---|---|"]
        for p in PATTERNS:
            lines.append(
                f"| {p} | {_fmt(fm['run']['pct'][p])} | {fm['run']['counts'][p]} | "
                f"{_fmt(fm['published'][p])} |"
            )
        lines.append(f"(run: {fm['run']['total']} classified, {fm['run']['other']} other)")
    return "\n".join(lines)


def read_rows(logdir: str | Path, na_if_auto_submitted: bool = False) -> tuple[
    list[dict[str, Any]], str | None
]:
    """Episode rows from Inspect logs (CLI shell: reads logs through ``harness.results``).

    Returns the rows and the run's mode (from the task args; ``agentic`` when unset).
    ``na_if_auto_submitted`` reads a suite-protocol log as the published protocol would
    count it (an auto-submitted run is N/A).
    """
    from harness.results import read_results, read_score_metadata  # the CLI shell's edge

    frame = read_results(logdir)
    if frame.height == 0:
        return [], None
    frame = frame.filter(frame["score_key"] == "causalgame_scorer/survival")
    meta = {
        (r["log_file"], r["sample_id"], r["epoch"]): json.loads(r["metadata"])
        for r in read_score_metadata(logdir, "causalgame_scorer").iter_rows(named=True)
    }
    modes = set()
    rows = []
    for r in frame.iter_rows(named=True):
        args = json.loads(r["task_args"] or "{}")
        modes.add(str(args.get("mode") or "agentic"))
        m = meta.get((r["log_file"], r["sample_id"], r["epoch"]), {})
        survival = r["score_value"] if r["error"] is None else None
        if na_if_auto_submitted and m.get("auto_submitted"):
            survival = None
        rows.append({"scenario": m.get("scenario", r["sample_id"]), "trial": r["epoch"],
                     "survival": survival, "failure_mode": m.get("failure_mode"),
                     "errored": r["error"] is not None})
    return rows, (modes.pop() if len(modes) == 1 else None)


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("logdir", help="a log file or a folder of Inspect logs")
    parser.add_argument("--leaderboard", required=True, help="the published leaderboard.json")
    parser.add_argument("--rubric", help="the published rubric.json (failure patterns)")
    parser.add_argument("--mode", help="agentic | prompting (default: the run's own)")
    parser.add_argument("--model", help="a published row's model id (default: the nearest)")
    parser.add_argument("--na-if-auto-submitted", action="store_true",
                        help="count auto-submitted runs of a suite-protocol log as N/A")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    rows, run_mode = read_rows(args.logdir, args.na_if_auto_submitted)
    if not rows:
        print(f"no CausalGame episodes under {args.logdir}", file=sys.stderr)
        return 1
    rubric = json.loads(Path(args.rubric).read_text(encoding="utf-8")) if args.rubric else None
    result = compare(rows, load_leaderboard(args.leaderboard), args.mode or run_mode or "agentic",
                     args.model, rubric)
    print(json.dumps(result, indent=1) if args.json else to_markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
