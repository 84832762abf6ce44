"""The setup swing of a study: how far the evaluation setup alone moves each model's score.

    harness causalgame swing LOGDIR --out DIR [--score-key K] [--model-factor model]
    python -m benchmarks.causalgame.swing LOGDIR --out DIR [...]   (the recorded command)

Why: the evaluatology paper's headline is that evaluation choices alone (scaffold,
submission handling, protocol, prompt format, the software stack) swing a model's score by
up to 70%; this suite's studies varied method parameters, not the setup. A *setup* is one
combination of a study's non-model factor levels; per model, the swing is max - min of the
setups' mean scores over the same items (paired), with a percentile bootstrap CI over
items, also relative to the best setup. Then: does the model ranking flip across setups,
each factor's main-effect share of the variance with its CI (``harness.stats``), and the
N/A count of every setup (a setup whose episodes are all N/A has no mean and leaves the
swing, which the table says).

Logs are read through ``harness.results``; the factor levels come from each log's tags
(``factor=label``, as ``harness study run`` writes them). Writes ``report.json`` (with
``provenance.report_command``, so ``harness study regenerate --check`` rebuilds it) and
``report.md`` into ``--out``. Study-agnostic: the arithmetic study uses it too.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from harness.results import load_results
from harness.stats import main_effect_shares, setup_swing

SCHEMA = "setup-swing/1"
PAPER_SWING = 0.70
"""The evaluatology paper's headline: evaluation choices alone swing scores by up to 70%."""
N_BOOT = 2000


def tagged_frame(log_dir: str | Path, score_key: str | None
                 ) -> tuple[pl.DataFrame, str, str]:
    """The rows of one score key with one ``f_<factor>`` column per tagged factor, and the
    counting line (each (cell, sample, epoch) once across resumed or retried attempts)."""
    loaded = load_results(log_dir)
    frame = loaded.frame
    if frame.height == 0:
        raise ValueError(f"no logs with samples under {log_dir}")
    keys = frame["score_key"].unique(maintain_order=True).to_list()
    key = score_key or keys[0]
    if key not in keys:
        raise ValueError(f"no score {key!r}; the logs have {keys}")
    frame = frame.filter(pl.col("score_key") == key)
    tags = [dict(t.split("=", 1) for t in (row or []) if "=" in t)
            for row in frame["tags"].to_list()]
    names = sorted({k for t in tags for k in t})
    columns = [pl.Series(f"f_{n}", [t.get(n) for t in tags], dtype=pl.String) for n in names]
    item = pl.concat_str([pl.col("sample_id"), pl.col("epoch").cast(pl.String)], separator="#")
    return frame.with_columns(*columns, item.alias("item")), key, loaded.account.line()


def analyse(frame: pl.DataFrame, model_factor: str = "model", n_boot: int = N_BOOT
            ) -> dict[str, Any]:
    """Swing per model, ranking flips, main-effect shares and per-setup N/A counts."""
    factors = sorted(c[2:] for c in frame.columns if c.startswith("f_"))
    if model_factor not in factors:
        raise ValueError(f"no factor {model_factor!r} in the logs' tags; factors: {factors}")
    setup_factors = [f for f in factors if f != model_factor]
    frame = frame.with_columns(
        pl.concat_str([pl.lit(f"{f}=") + pl.col(f"f_{f}") for f in setup_factors],
                      separator=", ").alias("setup"),
        pl.when(pl.col("error").is_null()).then(pl.col("score_value")).otherwise(None)
        .alias("value"),
    )
    setups = sorted(frame["setup"].unique().to_list())
    items = sorted(frame["item"].unique().to_list())
    models = sorted(frame[f"f_{model_factor}"].unique().to_list())
    per_model: dict[str, Any] = {}
    cell_means: dict[str, dict[str, float | None]] = {}
    for model in models:
        sub = frame.filter(pl.col(f"f_{model_factor}") == model)
        matrix = np.full((len(setups), len(items)), np.nan)
        na = {s: 0 for s in setups}
        rows = {s: 0 for s in setups}
        for r in sub.iter_rows(named=True):
            i, j = setups.index(r["setup"]), items.index(r["item"])
            rows[r["setup"]] += 1
            if r["value"] is None or not math.isfinite(float(r["value"])):
                na[r["setup"]] += 1
            else:
                matrix[i, j] = float(r["value"])
        swing = setup_swing(matrix, n_boot=n_boot)
        means = dict(zip(setups, swing.pop("setup_means"), strict=True))
        cell_means[model] = means
        per_model[model] = {
            **swing,
            "max_setup": None if swing["argmax"] is None else setups[swing["argmax"]],
            "min_setup": None if swing["argmin"] is None else setups[swing["argmin"]],
            "setups": [{"setup": s, "mean": means[s], "n": rows[s], "n_na": na[s]}
                       for s in setups],
            "all_na_setups": [s for s in setups if means[s] is None and rows[s]],
            "not_run": [s for s in setups if not rows[s]],
        }
    return {
        "factors": factors, "model_factor": model_factor, "setups": setups,
        "items": items, "models": per_model, "ranking": ranking_flips(cell_means),
        "shares": shares(frame, factors, n_boot),
    }


def ranking_flips(cell_means: Mapping[str, Mapping[str, float | None]]) -> dict[str, Any]:
    """The model order in every setup where all models have a mean, and whether it flips."""
    models = sorted(cell_means)
    setups = sorted({s for m in cell_means.values() for s in m})
    orders: dict[str, list[str]] = {}
    for s in setups:
        vals = {m: cell_means[m].get(s) for m in models}
        if any(v is None for v in vals.values()):
            continue
        orders[s] = sorted(models, key=lambda m: (-float(vals[m] or 0.0), m))
    tied = [s for s in orders if len({cell_means[m][s] for m in models}) < len(models)]
    distinct = {tuple(o) for s, o in orders.items() if s not in tied}
    return {"orders": orders, "ties": tied, "flips": len(distinct) > 1,
            "distinct_orders": sorted(list(o) for o in distinct)}


def shares(frame: pl.DataFrame, factors: Sequence[str], n_boot: int) -> dict[str, Any]:
    """Main-effect variance shares over the rows with a value (N/A rows left out)."""
    rows = frame.filter(pl.col("value").is_not_null() & pl.col("value").is_finite())
    if rows.height < 2:
        return {}
    return main_effect_shares(
        rows["value"].to_list(), {f: rows[f"f_{f}"].to_list() for f in factors},
        rows["item"].to_list(), n_boot=n_boot,
    )


def _pct(value: Any) -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else f"{100 * float(value):.1f}"


def to_markdown(report: Mapping[str, Any]) -> str:
    """The swing per model, the setups' means, the flips and the shares as Markdown."""
    lines = [
        f"# Setup swing: {report['study']}", "",
        f"Score `{report['score_key']}` (values in percent points of the score's 0-1 scale); "
        f"a setup is one combination of {', '.join(report['setup_factors']) or '—'}; "
        f"{len(report['items'])} items (sample#epoch), paired across setups; 95% percentile "
        f"bootstrap over items ({report['n_boot']} resamples). The paper's headline: up to "
        f"{100 * PAPER_SWING:.0f}% from evaluation choices alone. Logs: "
        f"{report['counting']}.", "",
        "| model | swing (max − min) | 95% CI | relative to best | 95% CI | best setup | "
        "worst setup | setups with a mean | all-N/A setups | setups not run |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for model, m in report["models"].items():
        lines.append(
            f"| {model} | {_pct(m['swing'])} | [{_pct(m['lo'])}, {_pct(m['hi'])}] | "
            f"{_pct(m['relative'])}% | [{_pct(m['relative_lo'])}, {_pct(m['relative_hi'])}] | "
            f"{m['max_setup']} | {m['min_setup']} | {m['n_setups']} | "
            f"{len(m['all_na_setups'])} | {len(m.get('not_run', []))} |")
    models = list(report["models"])
    lines += ["", "| setup | " + " | ".join(f"{m} mean | {m} N/A" for m in models) + " |",
              "|---|" + "---|---|" * len(models)]
    for i, setup in enumerate(report["setups"]):
        cells = []
        for m in models:
            s = report["models"][m]["setups"][i]
            cells += ([_pct(s["mean"]), str(s["n_na"])] if s.get("n", 1)
                      else ["not run", "—"])
        lines.append(f"| {setup} | " + " | ".join(cells) + " |")
    rank = report["ranking"]
    lines += ["", f"Model ranking across the {len(rank['orders'])} setups where every model has "
              f"a mean: {'flips' if rank['flips'] else 'does not flip'} "
              f"({len(rank['distinct_orders'])} distinct strict orders; "
              f"{len(rank['ties'])} setups tied)."]
    if report["shares"]:
        lines += ["", "| component | main-effect share of the variance | 95% CI |", "|---|---|---|"]
        for name, s in report["shares"].items():
            lines.append(f"| {name} | {_pct(s['share'])}% | [{_pct(s['lo'])}, {_pct(s['hi'])}] |")
        lines.append("")
        lines.append("Shares are main effects only (SS of the factor's level means over the "
                     "total SS of the rows with a value); `rest` is interactions and noise; "
                     "the study report's ANOVA has the interactions.")
    lines.append("")
    lines.append(f"Command: `{report['provenance']['report_command']}`")
    return "\n".join(lines) + "\n"


def build(log_dir: str | Path, out: str | Path, score_key: str | None = None,
          model_factor: str = "model", n_boot: int = N_BOOT) -> dict[str, Any]:
    """Analyse the logs and write ``report.json`` and ``report.md`` into ``out``."""
    frame, key, counting = tagged_frame(log_dir, score_key)
    result = analyse(frame, model_factor, n_boot)
    study = log_dir
    study_file = Path(log_dir) / "study.yaml"
    if study_file.is_file():
        for line in study_file.read_text(encoding="utf-8").splitlines():
            if line.startswith("name:"):
                study = line.split(":", 1)[1].strip()
                break
    command = ["python", "-m", "benchmarks.causalgame.swing", str(log_dir), "--out", str(out),
               "--score-key", key, "--model-factor", model_factor, "--n-boot", str(n_boot)]
    report = {
        "schema": SCHEMA, "study": str(study), "score_key": key, "n_boot": n_boot,
        "setup_factors": [f for f in result["factors"] if f != model_factor],
        "paper_swing": PAPER_SWING, "counting": counting, **result,
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "provenance": {"report_command": shlex.join(command)},
    }
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "report.json").write_text(json.dumps(report, indent=1, default=float) + "\n",
                                        encoding="utf-8")
    (folder / "report.md").write_text(to_markdown(report), encoding="utf-8")
    return report


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("log_dir", help="a study's log folder")
    parser.add_argument("--out", required=True, help="folder for report.json and report.md")
    parser.add_argument("--score-key", help="score key (default: the first in the logs)")
    parser.add_argument("--model-factor", default="model")
    parser.add_argument("--n-boot", type=int, default=N_BOOT)
    args = parser.parse_args(argv)
    report = build(args.log_dir, args.out, args.score_key, args.model_factor, args.n_boot)
    print(to_markdown(report))
    return 0


if __name__ == "__main__":
    from harness.errors import guarded

    sys.exit(guarded(main))
