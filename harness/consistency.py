"""Consistency across trials: pass@k, pass^k and the per-item flip rate of runs with epochs.

    harness consistency LOG_OR_DIR [...] [--metric KEY] [-k K] [--threshold V] [--json]

Why: a mean over epochs hides whether a model solves an item every time or half the time;
an agent that is right 50% of the time on every item and one that is right on half the
items every time have the same mean. Per item, over its epochs:

* ``pass_at_k``: the chance that at least one of k trials passes, and ``pass_hat_k``
  (pass^k): the chance that all k pass, both computed by Inspect's own reducers
  (``inspect_ai.scorer.pass_at`` and ``pass_k``, Chen et al. 2021 and Yao et al. 2024,
  unbiased estimators from n >= k epochs), never re-implemented here;
* ``flip_rate``: the share of pairs of the item's trials whose outcomes (pass: a value at
  least ``threshold``, as for pass@k) differ (0: the item always gets the same outcome;
  1/2 or more: a coin flip).

Per run, each is averaged over items with its interval: pass@k and pass^k with the suite's
score interval (:func:`harness.stats.score_mean_ci`), the flip rate as a proportion of trial
pairs clustered by item (:func:`harness.stats.binary_mean_ci`, so a run with no flip still
has an interval, not a standard error of 0).

:func:`item_consistency` returns one row per run x item with the run's columns (task,
model, eval metadata with its factor levels), so the three columns are responses the
factorial analysis takes like any score (``harness.factorial.analysis.analyze(frame,
response="flip_rate", ...)``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from harness.errors import UserInputError
from harness.results import apply_errored_policy, with_unreported_keys
from harness.stats import binary_mean_ci, is_binary, score_mean_ci

__all__ = ["item_consistency", "run_consistency"]

RUN_COLUMNS = ("log_file", "task", "model", "solver", "task_args", "model_args",
               "generate_config", "eval_metadata")
"""Columns that identify a run (one log) and travel with each item's row."""


def _reduced(reducer: Any, values: Sequence[float]) -> float:
    """One item's value under an Inspect score reducer (NaN where it is undefined)."""
    from inspect_ai.scorer import Score

    value = reducer([Score(value=float(v)) for v in values]).value
    return float(value) if isinstance(value, int | float) else math.nan


def _flip_pairs(values: Sequence[float], threshold: float) -> tuple[int, int]:
    """(pairs of trials whose outcome differs, pairs of trials) of one item; a trial's
    outcome is pass (value at least ``threshold``) or fail, as for pass@k."""
    x = np.asarray(values, dtype=np.float64) >= threshold
    n = len(x)
    if n < 2:
        return 0, 0
    differ = int(np.triu(x[:, None] != x[None, :], k=1).sum())
    return differ, n * (n - 1) // 2


def item_consistency(frame: pl.DataFrame, metric: str, k: int, *,
                     threshold: float = 1.0) -> pl.DataFrame:
    """One row per run (log) x item of ``metric``: ``epochs``, ``passes`` (epochs scoring
    at least ``threshold``), ``pass_at_k``, ``pass_hat_k``, ``flip_rate`` (null for an
    item with one epoch), ``flip_pairs``/``pairs``, and the run's :data:`RUN_COLUMNS`.

    Errored epochs count under the task's errored-sample policy
    (:func:`harness.results.apply_errored_policy`), as everywhere in the suite.
    """
    from inspect_ai.scorer import pass_at, pass_k

    if k < 1:
        raise UserInputError(f"k must be at least 1, got {k}")
    rows = with_unreported_keys(frame, [metric]).filter(pl.col("score_key") == metric)
    if rows.height == 0:
        raise UserInputError(f"no score key {metric!r} in these logs")
    rows = apply_errored_policy(rows)
    at_k, all_k = pass_at(k, value=threshold), pass_k(k, value=threshold)
    keep = [c for c in RUN_COLUMNS if c in rows.columns]
    grouped = (rows.sort("epoch").group_by([*keep, "sample_id"], maintain_order=True)
               .agg(pl.col("score_value").alias("values")))
    out = []
    for row in grouped.iter_rows(named=True):
        values = [float(v) for v in row.pop("values")]
        differ, pairs = _flip_pairs(values, threshold)
        n = len(values)
        out.append({**row, "epochs": n, "passes": sum(v >= threshold for v in values),
                    "pass_at_k": _reduced(at_k, values) if n >= k else None,
                    "pass_hat_k": _reduced(all_k, values) if n >= k else None,
                    "flip_pairs": differ, "pairs": pairs,
                    "flip_rate": differ / pairs if pairs else None})
    schema_extra = {"epochs": pl.Int64(), "passes": pl.Int64(), "pass_at_k": pl.Float64(),
                    "pass_hat_k": pl.Float64(), "flip_pairs": pl.Int64(), "pairs": pl.Int64(),
                    "flip_rate": pl.Float64()}
    return pl.DataFrame(out, schema={**{c: rows.schema[c] for c in [*keep, "sample_id"]},
                                     **schema_extra})


def _interval(values: pl.Series, level: float) -> dict[str, Any]:
    kept = values.drop_nulls().drop_nans()
    if kept.len() == 0:
        return {"mean": None, "ci": [None, None], "n_items": 0}
    x = kept.to_numpy()
    est = score_mean_ci(x, level=level, bounds=(0.0, 1.0), binary=is_binary(x))
    lo, hi = (None if math.isnan(v) else v for v in (est.lo, est.hi))
    return {"mean": est.estimate, "ci": [lo, hi], "n_items": int(kept.len())}


def run_consistency(items: pl.DataFrame, *, level: float = 0.95) -> list[dict[str, Any]]:
    """Per run (log): mean pass@k, pass^k and flip rate over items, with intervals."""
    out = []
    for (log,), group in items.group_by(["log_file"], maintain_order=True):
        first = group.row(0, named=True)
        flips = group.filter(pl.col("pairs") > 0)
        flip: dict[str, Any] = {"mean": None, "ci": [None, None], "n_items": 0, "pairs": 0}
        if flips.height:
            # one 0/1 per pair of trials, clustered by item (items are what was sampled)
            differ = flips["flip_pairs"].to_numpy()
            pairs = flips["pairs"].to_numpy()
            indicator = np.concatenate([np.r_[np.ones(d), np.zeros(p - d)]
                                        for d, p in zip(differ, pairs, strict=True)])
            cluster = np.repeat(np.arange(flips.height), pairs)
            est = binary_mean_ci(indicator, cluster=cluster if flips.height > 1 else None,
                                 level=level)
            flip = {"mean": est.estimate, "ci": [est.lo, est.hi], "n_items": flips.height,
                    "pairs": int(pairs.sum())}
        out.append({"log_file": log, "task": first.get("task"), "model": first.get("model"),
                    "items": group.height,
                    "epochs": sorted(set(group["epochs"].to_list())),
                    "pass_at_k": _interval(group["pass_at_k"], level),
                    "pass_hat_k": _interval(group["pass_hat_k"], level),
                    "flip_rate": flip})
    return out
