"""One table per agent-study metric, with CIs, and paired differences against a baseline agent.

    python -m methods.lightwm.study_summary LOGDIR --out SUMMARY.md [--baseline react]
        [--keys causalgame_scorer/victory prompt_cost/prompt_tokens ...]

The factorial engine's report analyses one score key at a time; the LightWM claim is about
two at once (success and what each call costs in prompt length), so this writes both side
by side: per agent level, the mean of each score key with its 95% CI (Wilson for 0/1
keys, t otherwise: :mod:`harness.stats`), and the per-item paired difference of each
agent from ``baseline`` (:func:`harness.stats.paired_difference_ci`). Logs are read
through :mod:`harness.results` (``study_frame``: rows carry the factor levels).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from harness import stats
from harness.factorial.report.frame import study_frame

KEYS = tuple(f"household_score/{k}" for k in (
    "success", "progress", "steps", "invalid", "prompt_tokens", "prompt_tokens_max",
    "model_calls"))
"""Default columns: the household task's score keys."""
BINARY = frozenset({"success", "victory"})
"""Columns that are 0/1 outcomes (Wilson intervals); every other column gets a t interval."""


def _fmt(x: float) -> str:
    if math.isnan(x):
        return "nan"
    return f"{x:.3g}" if abs(x) < 10 else f"{x:.0f}"


def _interval(values: list[float], binary: bool) -> str:
    if binary:
        est = stats.wilson_ci(int(sum(values)), len(values))
    else:
        est = stats.mean_ci(values)
    return f"{_fmt(est.estimate)} [{_fmt(est.lo)}, {_fmt(est.hi)}]"


def _column(score_key: str) -> str:
    """A score key's column name: the part after the scorer (``prompt_cost/model_calls``
    -> ``model_calls``)."""
    return score_key.rsplit("/", 1)[-1]


def summary(log_dir: Path, baseline: str = "react", factor: str = "agent",
            score_keys: Sequence[str] = KEYS) -> str:
    """The Markdown tables (means with CIs; paired differences from ``baseline``) of
    ``score_keys`` (full keys, ``scorer/key``; a column per key the logs hold)."""
    wanted = {k: _column(k) for k in score_keys}
    if len(set(wanted.values())) < len(wanted):
        raise ValueError(f"two score keys share a column name: {sorted(wanted)}")
    frame = (study_frame(log_dir)
             .filter(pl.col("score_key").is_in(list(wanted)))
             .with_columns(pl.col("score_key").replace_strict(wanted)))
    levels = sorted(frame[factor].unique().to_list())
    present = set(frame["score_key"].to_list())
    keys = [c for c in wanted.values() if c in present]
    lines = [f"| {factor} | n | " + " | ".join(keys) + " |",
             "|---|---|" + "---|" * len(keys)]
    for level in levels:
        part = frame.filter(pl.col(factor) == level)
        cells = []
        n = 0
        for key in keys:
            values = part.filter(pl.col("score_key") == key)["score_value"].to_list()
            n = max(n, len(values))
            cells.append(_interval(values, key in BINARY) if values else "-")
        lines.append(f"| {level} | {n} | " + " | ".join(cells) + " |")
    lines += ["", f"Paired difference from `{baseline}` (same items; 95% CI):", "",
              f"| {factor} | " + " | ".join(keys) + " |", "|---|" + "---|" * len(keys)]
    base = frame.filter(pl.col(factor) == baseline)
    for level in levels:
        if level == baseline:
            continue
        cells = []
        for key in keys:
            a = frame.filter((pl.col(factor) == level) & (pl.col("score_key") == key))
            b = base.filter(pl.col("score_key") == key)
            joined = a.join(b, on="sample_id", suffix="_base").sort("sample_id")
            if joined.height < 2:
                cells.append("-")
                continue
            est = stats.paired_difference_ci(joined["score_value"].to_numpy(),
                                             joined["score_value_base"].to_numpy())
            cells.append(f"{_fmt(est.estimate)} [{_fmt(est.lo)}, {_fmt(est.hi)}]")
        lines.append(f"| {level} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write the summary of a study's logs to ``--out`` (and print it)."""
    parser = argparse.ArgumentParser(prog="python -m methods.lightwm.study_summary")
    parser.add_argument("log_dir", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--baseline", default="react")
    parser.add_argument("--factor", default="agent")
    parser.add_argument("--keys", nargs="+", default=list(KEYS),
                        help="score keys (scorer/key), one column each; default: household's")
    ns = parser.parse_args(argv)
    text = summary(ns.log_dir, ns.baseline, ns.factor, ns.keys)
    ns.out.parent.mkdir(parents=True, exist_ok=True)
    ns.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    from harness.errors import guarded

    raise SystemExit(guarded(main))
