"""Replies cut by the token cap, per study cell, from a ThetaEvolve study's logs.

    harness method thetaevolve-replies LOGDIR --out DIR      # DIR/replies.{md,json}

Why: ThetaEvolve's lazy penalties score a reply that holds no applicable diff and no whole
program, and a reply cut by ``max_tokens`` usually holds neither (a program echoed past the
cap, a SEARCH/REPLACE block without its closing marker). Whether a study could see
evolution at all therefore depends on how many replies the cap cut, so the count belongs
beside the study's report, computed from the logs rather than counted by hand. Each model
call of a sample is read through :func:`harness.results.read_model_calls`: a reply hit the
cap when Inspect recorded its ``stop_reason`` as ``max_tokens``; the cap is the call's own
``max_tokens`` (the generate config the call was made with). Cells are the study's (rows of
:func:`harness.factorial.report.frame.study_frame`, one per task sample and epoch).
A study declares this as a summary (``summaries:`` in its study.yaml), so
``harness study regenerate --check`` reruns and compares it.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from harness.factorial.report.frame import study_factors, study_frame
from harness.results import read_model_calls

CUT = "max_tokens"
"""Inspect's stop reason for a reply that ran into its token cap."""


def reply_caps(log_dir: Path) -> pl.DataFrame:
    """One row per cell sample: ``task``, ``sample_id``, ``epoch``, the factor levels,
    ``replies`` (model calls), ``cap`` (their ``max_tokens``; the largest if they differ,
    null if none was set), ``hit_cap`` (replies whose stop reason was ``max_tokens``),
    ``output_tokens`` (summed) and ``longest`` (the longest reply, in output tokens)."""
    frame = study_frame(log_dir)
    factors = study_factors(frame)
    keys = (frame.select("log_file", "task", "sample_id", "epoch", *factors)
            .unique(maintain_order=True).sort(["task", "sample_id", "epoch", *factors]))
    rows: list[dict[str, Any]] = []
    for row in keys.iter_rows(named=True):
        calls = read_model_calls(row["log_file"], row["sample_id"], int(row["epoch"]))
        rows.append({
            **{k: row[k] for k in ("task", "sample_id", "epoch", *factors)},
            "replies": calls.height,
            "cap": calls["max_tokens"].max(),
            "hit_cap": int((calls["stop_reason"] == CUT).sum()),
            "output_tokens": int(calls["output_tokens"].sum()),
            "longest": calls["output_tokens"].max(),
        })
    schema: dict[str, Any] = {"task": pl.Utf8(), "sample_id": pl.Utf8(), "epoch": pl.Int64(),
                              **{f: pl.Utf8() for f in factors},
                              "replies": pl.Int64(), "cap": pl.Int64(), "hit_cap": pl.Int64(),
                              "output_tokens": pl.Int64(), "longest": pl.Int64()}
    return pl.DataFrame(rows, schema=schema)


def totals(table: pl.DataFrame) -> dict[str, Any]:
    """Replies and replies cut over the whole study, with the caps used (sorted)."""
    caps = sorted({int(c) for c in table["cap"].drop_nulls().to_list()})
    return {"replies": int(table["replies"].sum()), "hit_cap": int(table["hit_cap"].sum()),
            "caps": caps, "output_tokens": int(table["output_tokens"].sum())}


def render(table: pl.DataFrame, log_dir: str) -> str:
    """The Markdown page: what was counted, one row per cell sample, and the totals."""
    total = totals(table)
    columns = [c for c in table.columns if c != "epoch"]
    lines = [
        "# Replies and the token cap",
        "",
        f"From the model calls in `{log_dir}` (`harness method thetaevolve-replies`): a "
        "reply hit the cap when Inspect recorded its stop reason as `max_tokens`; `cap` is "
        "the `max_tokens` the call was made with; `longest` the longest reply in output "
        "tokens.",
        "",
        "| " + " | ".join(columns) + " |",
        "|" + "---|" * len(columns),
    ]
    for row in table.iter_rows(named=True):
        lines.append("| " + " | ".join("—" if row[c] is None else str(row[c])
                                       for c in columns) + " |")
    caps = ", ".join(str(c) for c in total["caps"]) or "none"
    lines += ["", f"**{total['hit_cap']} of {total['replies']} replies hit the cap** "
                  f"(cap {caps} tokens; {total['output_tokens']} output tokens in all).", ""]
    return "\n".join(lines)


def write(log_dir: Path, out: Path) -> dict[str, Any]:
    """Write ``out/replies.md`` and ``out/replies.json``; return the JSON dict."""
    table = reply_caps(log_dir)
    where = log_dir.as_posix()
    data = {"log_dir": where, "stop_reason_counted": CUT, "total": totals(table),
            "cells": table.to_dicts()}
    out.mkdir(parents=True, exist_ok=True)
    (out / "replies.json").write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    (out / "replies.md").write_text(render(table, where))
    return data


def main(argv: Sequence[str] | None = None) -> None:
    """``harness method thetaevolve-replies LOGDIR --out DIR`` (a study's ``summaries:``
    entry runs the same function as ``python -m methods.thetaevolve.replies``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log_dir", type=Path, help="a study run's log folder")
    parser.add_argument("--out", type=Path, required=True, help="folder for replies.{md,json}")
    args = parser.parse_args(argv)
    total = write(args.log_dir, args.out)["total"]
    print(f"{total['hit_cap']} of {total['replies']} replies hit the cap "
          f"(caps {total['caps']}) -> {args.out}")


if __name__ == "__main__":
    main()
