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

__all__ = ["entry_consistency", "flip_interval", "item_consistency", "item_outcomes",
           "run_consistency"]

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


def item_outcomes(values: Sequence[float], k: int, threshold: float = 1.0) -> dict[str, Any]:
    """One item's trials (its epochs, in order): ``epochs``, ``passes``, ``pass_at_k`` and
    ``pass_hat_k`` by Inspect's reducers (None with fewer than k trials), ``flip_pairs``,
    ``pairs`` and ``flip_rate`` (None with one trial)."""
    from inspect_ai.scorer import pass_at, pass_k

    n = len(values)
    differ, pairs = _flip_pairs(values, threshold)
    return {"epochs": n, "passes": sum(v >= threshold for v in values),
            "pass_at_k": _reduced(pass_at(k, value=threshold), values) if n >= k else None,
            "pass_hat_k": _reduced(pass_k(k, value=threshold), values) if n >= k else None,
            "flip_pairs": differ, "pairs": pairs,
            "flip_rate": differ / pairs if pairs else None}


def item_consistency(frame: pl.DataFrame, metric: str, k: int, *,
                     threshold: float = 1.0) -> pl.DataFrame:
    """One row per run (log) x item of ``metric``: ``epochs``, ``passes`` (epochs scoring
    at least ``threshold``), ``pass_at_k``, ``pass_hat_k``, ``flip_rate`` (null for an
    item with one epoch), ``flip_pairs``/``pairs``, and the run's :data:`RUN_COLUMNS`.

    Errored epochs count under the task's errored-sample policy
    (:func:`harness.results.apply_errored_policy`), as everywhere in the suite.
    """
    if k < 1:
        raise UserInputError(f"k must be at least 1, got {k}")
    rows = with_unreported_keys(frame, [metric]).filter(pl.col("score_key") == metric)
    if rows.height == 0:
        raise UserInputError(f"no score key {metric!r} in these logs")
    rows = apply_errored_policy(rows)
    keep = [c for c in RUN_COLUMNS if c in rows.columns]
    grouped = (rows.sort("epoch").group_by([*keep, "sample_id"], maintain_order=True)
               .agg(pl.col("score_value").alias("values")))
    out = []
    for row in grouped.iter_rows(named=True):
        values = [float(v) for v in row.pop("values")]
        out.append({**row, **item_outcomes(values, k, threshold)})
    schema_extra = {"epochs": pl.Int64(), "passes": pl.Int64(), "pass_at_k": pl.Float64(),
                    "pass_hat_k": pl.Float64(), "flip_pairs": pl.Int64(), "pairs": pl.Int64(),
                    "flip_rate": pl.Float64()}
    return pl.DataFrame(out, schema={**{c: rows.schema[c] for c in [*keep, "sample_id"]},
                                     **schema_extra})


def flip_interval(flip_pairs: Sequence[int], pairs: Sequence[int], *,
                  level: float = 0.95) -> dict[str, Any]:
    """The share of trial pairs whose outcomes differ over items with at least two trials
    (``flip_pairs[i]`` of ``pairs[i]`` for item i), with its interval: one 0/1 per pair of
    trials, clustered by item (items are what was sampled), so the interval is a Wilson
    interval on the effective sample size (:func:`harness.stats.binary_mean_ci`), inside
    [0, 1] and never of zero width, even when no item ever flips."""
    differ = np.asarray(flip_pairs, dtype=np.int64)
    total = np.asarray(pairs, dtype=np.int64)
    keep = total > 0
    differ, total = differ[keep], total[keep]
    if not len(total):
        return {"mean": None, "ci": [None, None], "n_items": 0, "pairs": 0}
    indicator = np.concatenate([np.r_[np.ones(d), np.zeros(p - d)]
                                for d, p in zip(differ, total, strict=True)])
    cluster = np.repeat(np.arange(len(total)), total)
    est = binary_mean_ci(indicator, cluster=cluster if len(total) > 1 else None, level=level)
    return {"mean": est.estimate, "ci": [est.lo, est.hi], "n_items": int(len(total)),
            "pairs": int(total.sum())}


def entry_consistency(values: Sequence[Sequence[float]], *, binary: bool,
                      threshold: float = 1.0, level: float = 0.95) -> dict[str, Any]:
    """A board entry's consistency across trials (issue 51 item 3), from each item's trial
    values (its epochs, errored trials already counted under the board's policy).

    ``k`` is the fewest trials any item has, so pass@k and pass^k (means over items of
    Inspect's reducers) use every item; the flip rate uses every item with two or more
    trials (:func:`flip_interval`). ``basis`` says how it was counted, or why there is
    nothing to count: one trial per item, or a score that is not a 0/1 outcome (pass and
    fail are then a threshold the board has no grounds to choose).
    """
    trials = [len(v) for v in values if len(v)]
    empty: dict[str, Any] = {"trials": min(trials) if trials else None,
                             "trials_max": max(trials) if trials else None,
                             "pass_at_k": None, "pass_hat_k": None, "flip_rate": None,
                             "flip_lo": None, "flip_hi": None, "flip_items": 0, "flip_pairs": 0}
    if not trials:
        return {**empty, "basis": "no counted trial"}
    if not binary:
        return {**empty, "basis": "not a 0/1 score: pass and fail are undefined"}
    if max(trials) < 2:
        return {**empty, "basis": "one trial per item: nothing to compare"}
    k = min(trials)
    items = [item_outcomes([float(x) for x in v], k, threshold) for v in values if len(v)]
    flip = flip_interval([i["flip_pairs"] for i in items], [i["pairs"] for i in items],
                         level=level)
    at_k = [i["pass_at_k"] for i in items if i["pass_at_k"] is not None]
    all_k = [i["pass_hat_k"] for i in items if i["pass_hat_k"] is not None]
    spread = f"{k}" if k == max(trials) else f"{k}-{max(trials)}"
    return {**empty, "pass_at_k": float(np.mean(at_k)) if at_k else None,
            "pass_hat_k": float(np.mean(all_k)) if all_k else None,
            "flip_rate": flip["mean"], "flip_lo": flip["ci"][0], "flip_hi": flip["ci"][1],
            "flip_items": flip["n_items"], "flip_pairs": flip["pairs"],
            "basis": f"{spread} trials on {len(items)} items; pass = score >= {threshold:g}; "
                     f"flip rate over {flip['pairs']} trial pairs of {flip['n_items']} items, "
                     f"Wilson {round(level * 100)}% CI clustered by item; pass@{k} and "
                     f"pass^{k} by Inspect's pass_at/pass_k reducers"}


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
        flip = flip_interval(group["flip_pairs"].to_list(), group["pairs"].to_list(),
                             level=level)
        out.append({"log_file": log, "task": first.get("task"), "model": first.get("model"),
                    "items": group.height,
                    "epochs": sorted(set(group["epochs"].to_list())),
                    "pass_at_k": _interval(group["pass_at_k"], level),
                    "pass_hat_k": _interval(group["pass_hat_k"], level),
                    "flip_rate": flip})
    return out
