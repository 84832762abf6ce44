"""Item response theory over the results frame: ``harness irt LOGDIR...``.

Why: a board's mean weighs every item alike and says nothing about which items tell its
entries apart. A 2PL (or Rasch) fit across every model x setup in some logs gives each
item a difficulty and a discrimination and each entry an ability with an interval; anchor
items picked from the fit (tinyBenchmarks, Polo et al. 2024) estimate the full mean from a
few items, and holding entries out says how far that estimate can be trusted on this
board. The statistics are :mod:`harness.stats`' (``fit_irt``, ``select_anchors``,
``anchor_holdout``); this module only shapes the results frame into a subjects x items
matrix and the fit into a report.

A *subject* is one evaluated setup: by default the distinct (model, solver, model args,
generation config, eval metadata) of a log, so the cells of a factorial study are
subjects. An *item* is one (task, sample id); epochs are averaged, so a sample run 3 times
and solved twice enters as 2/3 (Bernoulli pseudo-likelihood).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from harness.errors import UserInputError
from harness.results import LogPaths, apply_errored_policy, load_results
from harness.stats import anchor_holdout, fit_irt, item_embedding, select_anchors

__all__ = ["DEFAULT_SUBJECT", "ResponseMatrix", "irt_report", "response_matrix"]

DEFAULT_SUBJECT = ("model", "solver", "model_args", "generate_config", "eval_metadata")
_ID_LIKE = ("id", "_id", "cell", "run", "seed_offset")


@dataclass(frozen=True)
class ResponseMatrix:
    """Subjects x items scores in [0, 1] (NaN: not run), with readable labels."""

    values: np.ndarray
    subjects: list[str]
    items: list[str]
    score_key: str


def _pick_score_key(frame: pl.DataFrame, score_key: str | None) -> str:
    keys = frame.get_column("score_key").drop_nulls().unique(maintain_order=True).to_list()
    if score_key is not None:
        if score_key not in keys:
            raise UserInputError(f"score key {score_key!r} not in the logs (have: "
                                 f"{', '.join(map(str, keys))})")
        return score_key
    binary = [k for k in keys if frame.filter(pl.col("score_key") == k)
              .get_column("score_value").drop_nulls().is_in([0.0, 1.0]).all()]
    if len(keys) == 1:
        return str(keys[0])
    if len(binary) == 1:
        return str(binary[0])
    raise UserInputError("several score keys in the logs; name one with --score-key "
                         f"(have: {', '.join(map(str, keys))})")


def _labels(subjects: pl.DataFrame, columns: Sequence[str]) -> list[str]:
    """A short readable name per subject: the columns (and eval-metadata keys) that vary."""
    varying = [c for c in columns if c != "eval_metadata" and subjects[c].n_unique() > 1]
    meta_keys: list[str] = []
    if "eval_metadata" in columns:
        metas = [json.loads(m) if m else {} for m in subjects.get_column("eval_metadata")]
        # a factorial study's cells: the factor levels name a cell (harness.factorial)
        if all(isinstance(m.get("factors"), dict) for m in metas):
            metas = [dict(m["factors"]) for m in metas]
        keys = sorted({k for m in metas for k in m})
        differ = [k for k in keys if len({json.dumps(m.get(k), sort_keys=True)
                                          for m in metas}) > 1]
        plain = [k for k in differ if not any(k == s or k.endswith(s) for s in _ID_LIKE)]
        meta_keys = plain or differ
    else:
        metas = [{} for _ in range(subjects.height)]
    labels = []
    if meta_keys:  # the metadata names the setup; other columns only when the model varies
        varying = [c for c in varying if c == "model"]
    for row, meta in zip(subjects.iter_rows(named=True), metas, strict=True):
        parts = [str(row[c]) for c in (varying or ([] if meta_keys else [columns[0]]))]
        parts += [f"{k}={meta.get(k)}" for k in meta_keys]
        labels.append(" ".join(parts))
    # two subjects that differ only in a column left out of the label stay distinct
    seen: dict[str, int] = {}
    for i, label in enumerate(labels):
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:
            labels[i] = f"{label} #{seen[label]}"
    return labels


def response_matrix(frame: pl.DataFrame, score_key: str | None = None,
                    subject: Sequence[str] = DEFAULT_SUBJECT,
                    errored: Any = None) -> ResponseMatrix:
    """The subjects x items matrix of one score key of a results frame.

    Errored samples count as each task's ``eval.yaml`` says (or ``errored``: ``zero`` or
    ``drop``), as on every board. Scores must lie in [0, 1].

    Raises:
        UserInputError: No such score key, several and none named, a subject column that is
            not in the frame, or a score outside [0, 1].
    """
    missing = [c for c in subject if c not in frame.columns]
    if missing:
        raise UserInputError(f"subject columns not in the results frame: {missing}")
    key = _pick_score_key(frame, score_key)
    rows = apply_errored_policy(frame.filter(pl.col("score_key") == key), errored)
    rows = rows.filter(pl.col("score_value").is_not_null())
    if rows.is_empty():
        raise UserInputError(f"score key {key!r} has no counted values")
    values = rows.get_column("score_value").to_numpy()
    lo, hi = float(values.min()), float(values.max())
    if lo < 0.0 or hi > 1.0:
        raise UserInputError(f"score key {key!r} ranges over [{lo}, {hi}]; IRT needs scores "
                             "in [0, 1] (1 = solved): choose a 0/1 or proportion score")
    cells = (rows.with_columns(
                 pl.concat_str([pl.col("task"), pl.col("sample_id")], separator="/").alias("item"),
                 pl.concat_str([pl.col(c).cast(pl.String).fill_null("") for c in subject],
                               separator="\x1f").alias("subject_key"))
             .group_by("subject_key", "item")
             .agg(pl.col("score_value").mean()))
    subjects = (rows.with_columns(pl.concat_str([pl.col(c).cast(pl.String).fill_null("")
                                                 for c in subject], separator="\x1f")
                                  .alias("subject_key"))
                .unique("subject_key", maintain_order=True)
                .select("subject_key", *subject))
    items = cells.get_column("item").unique().sort().to_list()
    wide = (cells.pivot(on="item", index="subject_key", values="score_value")
            .join(subjects.select("subject_key"), on="subject_key", how="right")
            .select(items))
    values = wide.to_numpy().astype(np.float64)
    return ResponseMatrix(values=values, subjects=_labels(subjects, list(subject)),
                          items=[str(i) for i in items], score_key=key)


def _num(x: float) -> float | None:
    return None if not math.isfinite(x) else round(float(x), 4)


def irt_report(paths: LogPaths, *, score_key: str | None = None, model: str = "2pl",
               anchors: int = 10, folds: int | None = None, subject: Sequence[str] =
               DEFAULT_SUBJECT, errored: Any = None, level: float = 0.95,
               seed: int = 0) -> dict[str, Any]:
    """Fit, anchors and their held-out error for the logs under ``paths``, as JSON-ready
    data (what ``harness irt --json`` prints).

    Raises:
        UserInputError: See :func:`response_matrix`; fewer than 3 subjects or 2 items.
    """
    loaded = load_results(paths)
    if loaded.frame.is_empty():
        raise UserInputError(f"no samples in {paths}")
    matrix = response_matrix(loaded.frame, score_key, subject, errored)
    n_sub, n_item = matrix.values.shape
    if n_sub < 3 or n_item < 2:
        raise UserInputError(f"IRT needs at least 3 subjects and 2 items; the logs give "
                             f"{n_sub} subjects x {n_item} items for {matrix.score_key!r}")
    fit = fit_irt(matrix.values, model, level=level)
    k = max(1, min(anchors, n_item))
    chosen = select_anchors(item_embedding(fit), k, seed=seed)
    holdout = anchor_holdout(matrix.values, k, model=model, folds=folds, level=level,
                             seed=seed)
    ci = fit.ability_ci()
    bci = fit.difficulty_ci()
    means_s = np.nanmean(matrix.values, axis=1)
    means_i = np.nanmean(matrix.values, axis=0)
    subjects = sorted(
        ({"subject": s, "ability": _num(fit.ability[j]), "se": _num(fit.ability_se[j]),
          "ci": [_num(ci[j, 0]), _num(ci[j, 1])], "mean": _num(means_s[j]),
          "n_items": int(np.sum(~np.isnan(matrix.values[j]))),
          "holdout_truth": _num(holdout.truth[j]),
          "holdout_anchor": _num(holdout.estimates["anchor"][j]),
          "holdout_irt": _num(holdout.estimates["irt"][j])}
         for j, s in enumerate(matrix.subjects)),
        key=lambda r: -float(r["ability"] or 0.0))  # type: ignore[arg-type]
    items = [{"item": it, "difficulty": _num(fit.difficulty[i]), "se": _num(fit.difficulty_se[i]),
              "ci": [_num(bci[i, 0]), _num(bci[i, 1])],
              "discrimination": _num(fit.discrimination[i]),
              "discrimination_se": _num(fit.discrimination_se[i]), "mean": _num(means_i[i])}
             for i, it in enumerate(matrix.items)]
    return {
        "score_key": matrix.score_key, "model": model, "n_subjects": n_sub, "n_items": n_item,
        "n_cells": int(np.sum(~np.isnan(matrix.values))), "converged": fit.converged,
        "log_likelihood": _num(fit.log_likelihood), "level": level, "seed": seed,
        "subjects": subjects, "items": items,
        "anchors": [{"item": matrix.items[i], "weight": _num(w)}
                    for i, w in zip(chosen.items, chosen.weights, strict=True)],
        "holdout": {"k": holdout.k, "folds": holdout.folds,
                    "mae": {name: {"estimate": _num(e.estimate), "ci": [_num(e.lo), _num(e.hi)],
                                   "n": e.n} for name, e in holdout.mae.items()}},
        "counting": loaded.account.line(),
    }
