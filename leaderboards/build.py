"""Results frame -> leaderboard tables (mean score with item-clustered 95% CI per model).

Logs are read only through ``harness.results``; intervals come only from ``harness.stats``.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from harness.results import read_results
from harness.stats import mean_ci


def leaderboard(frame: pl.DataFrame, by: tuple[str, ...] = ("task", "model"),
                score_key: str | None = None) -> pl.DataFrame:
    """One row per ``by`` group: mean, clustered CI (by sample id), n, errors; best first.

    Errored samples are counted in ``errors`` and score zero, never dropped silently.
    """
    df = frame
    if score_key is not None:
        df = df.filter(pl.col("score_key") == score_key)
    rows = []
    for keys, group in df.group_by(list(by), maintain_order=True):
        values = group["score_value"].fill_null(0.0).to_numpy()
        # scores in [0, 1] (accuracy and the like): clip the interval to what is possible
        bounded = bool(len(values)) and values.min() >= 0.0 and values.max() <= 1.0
        est = mean_ci(values, cluster=group["sample_id"].to_numpy(),
                      bounds=(0.0, 1.0) if bounded else None)
        rows.append({
            **dict(zip(by, keys, strict=True)),
            "score_key": group["score_key"][0] if score_key is None else score_key,
            "mean": est.estimate, "ci_lo": est.lo, "ci_hi": est.hi, "n": len(values),
            "errors": int(group["error"].is_not_null().sum()),
        })
    out = pl.DataFrame(rows)
    return out.sort(["task", "mean"], descending=[False, True]) if len(out) else out


def to_markdown(table: pl.DataFrame) -> str:
    """A Markdown table with the CI shown as ``[lo, hi]``."""
    cols = [c for c in table.columns if c not in ("ci_lo", "ci_hi")]
    lines = ["| " + " | ".join(cols + ["95% CI"]) + " |",
             "|" + "---|" * (len(cols) + 1)]
    for row in table.iter_rows(named=True):
        cells = [f"{row[c]:.3f}" if isinstance(row[c], float) else str(row[c]) for c in cols]
        cells.append(f"[{row['ci_lo']:.3f}, {row['ci_hi']:.3f}]")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def build(log_dir: str | Path, out_dir: str | Path) -> dict[str, Path]:
    """Read every log under ``log_dir``; write leaderboard.csv and leaderboard.md."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    table = leaderboard(read_results(log_dir))
    paths = {"csv": out / "leaderboard.csv", "md": out / "leaderboard.md"}
    table.write_csv(paths["csv"])
    paths["md"].write_text("# Leaderboard\n\n" + to_markdown(table))
    return paths
