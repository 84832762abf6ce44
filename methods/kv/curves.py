"""Memory-vs-quality table of a KV study: one row per cell, means over its samples.

The factorial report answers "which factor moves the score"; a KV method's reader also wants
the curve itself — bytes kept against agreement and accuracy at each setting. This reads a
study's logs through :func:`harness.results.read_results` (the suite's one log reader) and
pivots the ``passkey_match`` and ``kv_stats/*`` scores per cell::

    python -m methods.kv.curves logs/studies/kv_xkv            # Markdown table on stdout
    python -m methods.kv.curves logs/studies/kv_scd ttft_scd_ms ttft_prefill_ms
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import polars as pl

from harness.results import read_results, read_score_metadata

SCORES = {
    "passkey_match": "passkey_acc",
    "game24_solved": "game24_acc",
    "kv_stats/kv_bytes": "kv_bytes",
    "kv_stats/kv_bytes_full": "kv_bytes_full",
    "kv_stats/kv_ratio": "kv_ratio",
    "kv_stats/agreement": "agreement",
    "kv_stats/exact": "exact",
}


def curve(log_dir: str | Path) -> pl.DataFrame:
    """Per-cell means of the KV scores, with the cell's factor levels as columns."""
    frame = read_results(log_dir).filter(pl.col("score_key").is_in(list(SCORES)))
    factors = frame["eval_metadata"].map_elements(
        lambda m: json.dumps(json.loads(m)["factors"], sort_keys=True), return_dtype=pl.String
    )
    wide = (
        frame.with_columns(cell=factors, score=pl.col("score_key").replace(SCORES))
        .group_by("cell", "score")
        .agg(pl.col("score_value").mean().alias("mean"), pl.len().alias("n"))
        .pivot(on="score", index="cell", values="mean")
    )
    levels = pl.DataFrame([json.loads(c) for c in wide["cell"]])
    out = pl.concat([levels, wide.drop("cell")], how="horizontal")
    keep = [c for c in out.columns if out[c].n_unique() > 1 or c in SCORES.values()]
    return out.select(keep).sort(by=[c for c in levels.columns if c in keep])


def markdown(frame: pl.DataFrame) -> str:
    """A Markdown table (bytes in KiB, rates to 3 decimals)."""
    cols = frame.columns
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in frame.iter_rows(named=True):
        cells = []
        for c in cols:
            v = row[c]
            if isinstance(v, float) and "bytes" in c:
                cells.append(f"{v / 1024:.0f} KiB")
            elif isinstance(v, float):
                cells.append(f"{v:.3f}")
            else:
                cells.append(str(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def extras(log_dir: str | Path, keys: list[str]) -> pl.DataFrame:
    """Per-cell means of method-specific numbers (``kv_tree_bytes``, ``ttft_scd_ms``...)
    that only the ``kv_stats`` score's metadata carries (the tidy frame keeps values only)."""
    rows = []
    for row in read_score_metadata(log_dir, "kv_stats").iter_rows(named=True):
        factors = json.loads(row["eval_metadata"] or "{}").get("factors", {})
        kv = json.loads(row["metadata"]).get("kv", {})
        rows.append({**factors, **{k: float(kv[k]) for k in keys if k in kv}})
    frame = pl.DataFrame(rows)
    levels = [c for c in frame.columns if c not in keys and frame[c].n_unique() > 1]
    return frame.group_by(levels).agg(pl.col(k).mean() for k in keys if k in frame.columns
                                      ).sort(levels)


def main(argv: list[str] | None = None) -> int:
    """``harness method kv-curves LOG_DIR [EXTRA_KEY ...]``: the curve table as Markdown."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print("usage: harness method kv-curves LOG_DIR [EXTRA_KEY ...]", file=sys.stderr)
        return 0 if args else 2
    print(markdown(extras(args[0], args[1:]) if len(args) > 1 else curve(args[0])))
    return 0


if __name__ == "__main__":  # python -m methods.kv.curves LOG_DIR [EXTRA_KEY ...]
    from harness.errors import guarded

    sys.exit(guarded(main))
