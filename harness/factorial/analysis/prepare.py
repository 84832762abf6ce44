"""Data preparation: checked columns, factor levels, per-cell and per cell x item aggregates.

Why here: every engine works on the small aggregated tables built once by ``prepare``;
factor names are replaced by internal ``_f<i>`` columns so no name can clash with patsy.

Errored samples: a results frame (one with an ``error`` column) is counted under the
suite's one errored-sample policy, :func:`harness.results.apply_errored_policy` (each
task's ``eval.yaml``; a frame that already has a policy applied keeps it), so the analysis
averages exactly what the leaderboard averages. Other frames (a CSV) keep the plain rule:
rows with a null response are left out.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import polars as pl

Family = Literal["gaussian", "binomial"]
ItemMode = Literal["fixed", "cluster", "random"]
Term = tuple[int, ...]

#: Names patsy would read as its own functions; shown quoted in the display formula.
_PATSY_NAMES = {"C", "Q", "I", "Sum", "Treatment", "Poly", "Helmert", "Diff", "np", "center"}


@dataclass
class Prepared:
    names: list[str]
    levels: list[list[str]]
    cells: pl.DataFrame  # _f0.._fk (str), _cell, n, mean, ss  (sorted by _cell)
    groups: pl.DataFrame | None  # _cell, _item_idx, n, mean, ss
    work: pl.DataFrame  # _f*, _y, [_item]
    n_obs: int
    items: list[str]
    errored_policy: str | None = None  # the policy applied ("zero", "drop"; None: no errors)
    n_errored: int = 0  # rows of errored samples in the input (counted or not)


def prepare(
    df: pl.DataFrame, response: str, factors: Sequence[str], item: str | None, family: Family
) -> Prepared:
    needed = [response, *factors, *([item] if item else [])]
    for column in needed:
        if column not in df.columns:
            raise ValueError(f"column {column!r} not found (have: {df.columns})")
    if len(set(factors)) != len(factors) or (item and item in factors) or response in factors:
        raise ValueError("factors, item and response must be distinct columns")
    fcols = [f"_f{i}" for i in range(len(factors))]
    levels = [
        df.get_column(f).drop_nulls().unique().sort().cast(pl.String).to_list() for f in factors
    ]
    counted, policy, n_errored = _counted(df, response)
    work = counted.select(
        *[pl.col(f).cast(pl.String).alias(c) for f, c in zip(factors, fcols, strict=True)],
        pl.col(response).cast(pl.Float64).alias("_y"),
        *([pl.col(item).cast(pl.String).alias("_item")] if item else []),
    ).drop_nulls()
    if work.height == 0:
        raise ValueError("no complete rows to analyse")
    if family == "binomial":
        bad = work.filter(~pl.col("_y").is_in([0.0, 1.0])).height
        if bad:
            raise ValueError(f"family='binomial' needs 0/1 responses; {bad} rows are not")
    agg = [
        pl.len().alias("n"),
        pl.col("_y").mean().alias("mean"),
        (pl.col("_y").var(ddof=0) * pl.len()).alias("ss"),
    ]
    cells = (
        work.group_by(fcols)
        .agg(agg)
        .sort(fcols)
        .with_row_index("_cell")
        .with_columns(pl.col("_cell").cast(pl.Int64))
    )
    groups = None
    items: list[str] = []
    if item:
        items = work.get_column("_item").unique().sort().to_list()
        item_index = pl.DataFrame({"_item": items, "_item_idx": np.arange(len(items))})
        groups = (
            work.group_by([*fcols, "_item"])
            .agg(agg)
            .join(cells.select([*fcols, "_cell"]), on=fcols)
            .join(item_index, on="_item")
            .sort(["_cell", "_item_idx"])
            .select(["_cell", "_item_idx", "n", "mean", "ss"])
        )
    return Prepared(list(factors), levels, cells, groups, work, work.height, items, policy,
                    n_errored)


def _counted(df: pl.DataFrame, response: str) -> tuple[pl.DataFrame, str | None, int]:
    """``df`` under the errored-sample policy (results frames only), the policy applied
    (``"zero"``, ``"drop"``, both comma-joined for a frame of several tasks) and the number
    of errored rows."""
    if "error" not in df.columns:
        return df, None, 0
    from harness.results import apply_errored_policy

    n_errored = int(df.get_column("error").is_not_null().sum())
    out = apply_errored_policy(df, response=response)
    applied = out.get_column("errored_policy").drop_nulls().unique().sort().to_list()
    return out, ", ".join(applied) or None, n_errored


def model_terms(
    k: int, order: int, names: Sequence[str], terms: Sequence[str] | None
) -> list[Term]:
    """Term tuples: all interactions up to ``order``, or the ``terms`` given as names."""
    if terms is None:
        if order < 1:
            raise ValueError("order must be >= 1")
        return [t for r in range(1, min(order, k) + 1) for t in itertools.combinations(range(k), r)]
    index = {n: i for i, n in enumerate(names)}
    out: list[Term] = []
    for text in terms:
        parts = [p.strip() for p in text.split(":")]
        missing = [p for p in parts if p not in index]
        if missing:
            raise ValueError(f"term {text!r} names unknown factor(s) {missing}")
        out.append(tuple(sorted(index[p] for p in parts)))
    return sorted(set(out), key=lambda t: (len(t), t))


def term_name(term: Term, names: Sequence[str]) -> str:
    return ":".join(names[i] for i in term)


def display_formula(response: str, terms: Sequence[Term], names: Sequence[str]) -> str:
    def q(name: str) -> str:
        ok = name.isidentifier() and name not in _PATSY_NAMES
        return name if ok else f"Q({json.dumps(name)})"

    rhs = " + ".join(":".join(q(names[i]) for i in t) for t in terms) or "1"
    return f"{q(response)} ~ {rhs}"
