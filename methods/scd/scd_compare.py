"""Per-rank paired comparisons of SCD's method levels (learned patch vs residual patch vs reuse).

The factorial report's pairwise comparisons average the method gap over every code rank;
SCD's claim is about each operating point (a patch should help where reuse degrades), so
this tabulates the paired-by-item difference of each pair of method levels at each rank,
with its 95% t interval from :func:`harness.stats.paired_difference` (logs read through
:func:`harness.results.read_results`, the suite's one reader)::

    python -m methods.scd.scd_compare methods/studies/kv_scd/logs/main            # agreement
    python -m methods.scd.scd_compare methods/studies/kv_scd/logs/main passkey_match
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import polars as pl

from harness.results import read_results
from harness.stats import paired_difference

DEFAULT_SCORE = "kv_stats/agreement"


def by_rank(log_dir: str | Path, score: str = DEFAULT_SCORE) -> pl.DataFrame:
    """One row per (rank, method a, method b): mean of a - b over items, CI, n."""
    frame = read_results(log_dir).filter(pl.col("score_key") == score)
    factors = frame["eval_metadata"].map_elements(
        lambda m: json.dumps(json.loads(m)["factors"]), return_dtype=pl.String)
    frame = frame.with_columns(
        method=factors.map_elements(lambda f: json.loads(f)["method"], return_dtype=pl.String),
        rank=factors.map_elements(lambda f: str(json.loads(f)["rank"]), return_dtype=pl.String),
    )
    return paired_table(frame)


def paired_table(frame: pl.DataFrame) -> pl.DataFrame:
    """The comparisons from a frame with ``method``, ``rank``, ``sample_id``, ``score_value``."""
    rows = []
    methods = sorted(frame["method"].unique().to_list())
    for rank in frame["rank"].unique().sort().to_list():
        at = frame.filter(pl.col("rank") == rank)
        for a, b in itertools.combinations(methods, 2):
            est, _ = paired_difference(at, "method", "score_value", "sample_id", levels=(a, b))
            rows.append({"rank": rank, "a": a, "b": b, "a_minus_b": est.estimate,
                         "lo": est.lo, "hi": est.hi, "n": est.n})
    return pl.DataFrame(rows)


def markdown(frame: pl.DataFrame) -> str:
    """The table as Markdown (differences to 3 decimals)."""
    lines = ["| rank | a | b | a - b | 95% CI | n |", "|---|---|---|---|---|---|"]
    for r in frame.iter_rows(named=True):
        lines.append(f"| {r['rank']} | {r['a']} | {r['b']} | {r['a_minus_b']:+.3f} | "
                     f"[{r['lo']:+.3f}, {r['hi']:+.3f}] | {r['n']} |")
    return "\n".join(lines)


if __name__ == "__main__":  # python -m methods.scd.scd_compare LOG_DIR [SCORE_KEY]
    print(markdown(by_rank(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else DEFAULT_SCORE)))
