"""Evaluation-report table and feasibility-by-constraint-count plot from WorldTravel logs.

    python -m benchmarks.worldtravel.report LOG_DIR [LOG_DIR ...] --plot feasibility.png

Reads logs only through ``harness.results`` and intervals only through ``harness.stats``;
one row per (model, constraints mode): delivery, feasibility and micro pass rate with 95%
CIs, feasibility per constraint-count bucket, and the fitted planning horizon, pooled and
within each trip length (1-4 days; count and length vary independently); then
TravelPlanner's six rates (delivery, commonsense / hard micro (pooled) and macro, final pass)
from the checker's per-constraint reports. Errored
samples count under the benchmark's errored-sample policy (eval.yaml: ``zero``, an errored
sample delivers no plan and scores 0), the same rule as the leaderboard and the factorial
analysis; the table gives their count and the policy.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from benchmarks.worldtravel.analysis import horizon_by_days, planning_horizon
from environments.worldtravel.analysis import (
    BUCKETS,
    TRAVELPLANNER_RATES,
    PlanCounts,
    bucket,
    plan_counts,
    travelplanner_rates,
)
from environments.worldtravel.store import scenario_index
from harness.results import (
    apply_errored_policy,
    read_results,
    read_score_metadata,
    with_metadata_columns,
    with_unreported_keys,
)
from harness.stats import mean_ci


def per_sample(paths: list[Path], errored: Any = None) -> pl.DataFrame:
    """One row per (log, model, mode, sample, epoch) with delivered/feasible/micro, the
    constraint count, ``errored`` and ``errored_policy``.

    Scores are counted under the errored-sample policy (``errored`` overrides eval.yaml's):
    ``zero`` gives an errored sample 0 on every key, ``drop`` leaves its keys null.
    """
    df = read_results([str(p) for p in paths])
    df = df.filter(pl.col("task").str.contains("worldtravel"))
    df = with_metadata_columns(df, ["n_constraints", "days"], source="sample_metadata")
    df = df.with_columns(
        pl.col("task_args")
        .map_elements(lambda s: json.loads(s or "{}").get("constraints", "hidden"), pl.String)
        .alias("mode")
    )
    keys = {
        "worldtravel_checker/delivered": "delivered",
        "worldtravel_checker/feasible": "feasible",
        "worldtravel_checker/micro": "micro",
    }
    index = ["log_file", "model", "mode", "sample_id", "epoch", "n_constraints", "days"]
    df = with_unreported_keys(df, list(keys))  # a log whose every sample errored
    scored = apply_errored_policy(df.filter(pl.col("score_key").is_in(list(keys))), errored,
                                  keep_dropped=True)
    wide = (
        scored.with_columns(pl.col("score_key").replace(keys))
        .pivot(on="score_key", index=index, values="score_value", aggregate_function="first")
    )
    flags = scored.group_by(index, maintain_order=True).agg(
        pl.col("errored").any(), pl.col("errored_policy").first())
    for key in keys.values():
        if key not in wide.columns:
            wide = wide.with_columns(pl.lit(None, pl.Float64()).alias(key))
    return wide.join(flags, on=index, how="left", nulls_equal=True, maintain_order="left")


def summary(samples: pl.DataFrame) -> list[dict[str, Any]]:
    """The report rows (floats, CIs as (lo, hi))."""
    rows = []
    for (model, mode), group in samples.group_by(["model", "mode"], maintain_order=True):
        counts = group["n_constraints"].to_list()
        feasible = group["feasible"].to_list()
        row: dict[str, Any] = {
            "model": model, "mode": mode, "n": group.height,
            "errored": int(group["errored"].sum()),
            "errored_policy": ", ".join(sorted(set(group["errored_policy"].drop_nulls()))),
        }
        for key in ("delivered", "feasible", "micro"):
            values = group[key].drop_nulls().to_numpy()  # null only where a policy dropped
            est = mean_ci(values, bounds=(0.0, 1.0)) if len(values) else None
            row[key] = ((est.estimate, est.lo, est.hi) if est is not None
                        else (math.nan, math.nan, math.nan))
        days = group["days"].to_list()
        kept = [(n, d, f) for n, d, f in zip(counts, days, feasible, strict=True)
                if f is not None]
        counts, feasible = [n for n, _, _ in kept], [f for _, _, f in kept]
        by: dict[str, list[float]] = {}
        for n, _, f in kept:
            by.setdefault(bucket(int(n)), []).append(float(f))
        row["buckets"] = {
            f"{lo}-{hi}": (sum(by[k]) / len(by[k]) if (k := f"{lo}-{hi}") in by else None)
            for lo, hi in BUCKETS
        }
        row["horizon"] = planning_horizon(counts, feasible)
        known = [(n, int(d), f) for n, d, f in kept if d is not None]
        row["horizon_by_days"] = (
            horizon_by_days([n for n, _, _ in known], [d for _, d, _ in known],
                            [f for _, _, f in known]) if known else {}
        )
        rows.append(row)
    return sorted(rows, key=lambda r: (-np.nan_to_num(r["feasible"][0], nan=-1.0), r["model"],
                                       r["mode"]))


def markdown(rows: list[dict[str, Any]]) -> str:
    """The README table, and a line with the errored-sample policy and count."""
    head = ["model", "constraints", "n", "delivery", "feasibility (95% CI)", "micro pass"]
    head += [f"feas. {lo}-{hi}" for lo, hi in BUCKETS]
    head += ["horizon", "horizon 1d/2d/3d/4d", "errored"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [
            r["model"],
            r["mode"],
            str(r["n"]),
            f"{r['delivered'][0]:.2f}",
            f"{r['feasible'][0]:.3f} [{r['feasible'][1]:.3f}, {r['feasible'][2]:.3f}]",
            f"{r['micro'][0]:.3f}",
        ]
        cells += ["–" if v is None else f"{v:.2f}" for v in r["buckets"].values()]
        cells.append("none" if r["horizon"] is None else f"{r['horizon']:.1f}")
        within = r.get("horizon_by_days", {})
        cells.append("/".join(
            "–" if f"{d}d" not in within else "none" if within[f"{d}d"] is None
            else f"{within[f'{d}d']:.1f}" for d in (1, 2, 3, 4)))
        cells.append(str(r["errored"]))
        lines.append("| " + " | ".join(cells) + " |")
    policies = sorted({p for r in rows for p in r["errored_policy"].split(", ") if p})
    how = {"zero": "scored 0 (policy zero)", "drop": "left out of the means (policy drop)"}
    errored = sum(r["errored"] for r in rows)
    lines += ["", f"Errored samples: {errored}, "
              + ("; ".join(how.get(p, p) for p in policies) or "none") + "."]
    return "\n".join(lines)


def travelplanner(paths: list[Path], samples: pl.DataFrame) -> list[dict[str, Any]]:
    """TravelPlanner's six rates per (model, mode), from the checker's per-constraint
    reports in the logs' score metadata.

    The sample set is ``samples`` (:func:`per_sample`, so the errored-sample policy has
    already decided): a sample the policy dropped is left out; an errored sample kept
    under ``zero`` is an undelivered plan over its scenario's constraints."""
    meta = read_score_metadata([str(p) for p in paths], "worldtravel_checker")
    reports = {(r["log_file"], r["sample_id"], r["epoch"]): json.loads(r["metadata"])
               for r in meta.iter_rows(named=True)}
    scenarios = scenario_index()
    rows = []
    for (model, mode), group in samples.group_by(["model", "mode"], maintain_order=True):
        plans: list[PlanCounts] = []
        for r in group.iter_rows(named=True):
            if r["feasible"] is None:  # left out by the errored-sample policy
                continue
            report = reports.get((r["log_file"], str(r["sample_id"]), int(r["epoch"])))
            if report is None or r["errored"]:
                known = scenarios.get(str(r["sample_id"]))
                kinds = [c.kind for c in known.constraints] if known else []
                plans.append(plan_counts(False, [{"kind": k, "passed": False}
                                                 for k in kinds]))
            else:
                plans.append(plan_counts(bool(report.get("delivered", r["delivered"])),
                                         report.get("results", [])))
        rows.append({"model": model, "mode": mode, "n": len(plans),
                     **travelplanner_rates(plans)})
    return rows


def travelplanner_markdown(rows: list[dict[str, Any]]) -> str:
    """TravelPlanner's table: delivery, commonsense and hard micro / macro, final pass."""
    head = ["model", "constraints", "n", "delivery", "commonsense micro",
            "commonsense macro", "hard micro", "hard macro", "final pass"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["model"], r["mode"], str(r["n"])] + [
            "–" if math.isnan(r[k]) else f"{r[k]:.3f}" for k in TRAVELPLANNER_RATES]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(rows: list[dict[str, Any]], out: Path) -> None:
    """Feasibility by constraint-count bucket, one line per (model, mode)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    labels = [f"{lo}-{hi}" for lo, hi in BUCKETS]
    for r in rows:
        ys = [r["buckets"][k] for k in labels]
        ax.plot(
            labels,
            [float("nan") if y is None else y for y in ys],
            marker="o",
            label=f"{r['model']} ({r['mode']})",
        )
    ax.set_xlabel("constraints per scenario")
    ax.set_ylabel("feasibility (all constraints pass)")
    ax.set_ylim(-0.03, 1.03)
    ax.set_title("WorldTravel: feasibility by constraint count")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    """CLI entry point: print the table, optionally write the plot."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", nargs="+", type=Path)
    parser.add_argument("--plot", type=Path, default=None)
    args = parser.parse_args(argv)
    samples = per_sample(args.logs)
    rows = summary(samples)
    print(markdown(rows))
    print("\nTravelPlanner's rates (micro pooled over all constraint instances; macro and "
          "final pass over all queries):\n")
    print(travelplanner_markdown(travelplanner(args.logs, samples)))
    if args.plot:
        plot(rows, args.plot)
    return 0


if __name__ == "__main__":
    from harness.errors import guarded

    raise SystemExit(guarded(main))
