"""The study frame: Inspect results with one column per factor, from the eval metadata.

Why here: reports never parse logs; they read :mod:`harness.results` and only add the
factor columns that :mod:`harness.factorial.run` recorded in each eval's metadata.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from harness.results import read_results, with_metadata_columns

#: Results columns a factor may not replace (they carry the response and its structure).
PROTECTED = frozenset({"sample_id", "epoch", "score_key", "score_value", "error",
                        "eval_metadata", "log_file", "status"})
#: Prefix for an original results column that a same-named factor displaces.
LOG_PREFIX = "log_"

Source = str | Path | Sequence[str | Path] | pl.DataFrame


def decoded_metadata(frame: pl.DataFrame) -> list[dict[str, Any]]:
    values = frame.get_column("eval_metadata").drop_nulls().unique(maintain_order=True)
    decoded = [json.loads(v) for v in values.to_list()]
    return [d for d in decoded if isinstance(d, dict)]


def study_factors(frame: pl.DataFrame) -> list[str]:
    """Factor names recorded in the frame's eval metadata (``factors`` keys), first-seen order.

    Works on a raw results frame or on a :func:`study_frame`, so callers (the CLI, the
    report) never have to guess which columns are factors.
    """
    names: dict[str, None] = {}
    for meta in decoded_metadata(frame):
        factors = meta.get("factors")
        if isinstance(factors, dict):
            names.update(dict.fromkeys(str(k) for k in factors))
    return list(names)


def level_key(value: str) -> tuple[int, float, str]:
    try:
        return (0, float(value), value)
    except ValueError:
        return (1, 0.0, value)


def display_levels(frame: pl.DataFrame, factor: str) -> list[str]:
    """A factor's levels in display order: numerically when all are numbers, else by name."""
    values = frame.get_column(factor).drop_nulls().unique().to_list()
    return sorted((str(v) for v in values), key=level_key)


def study_frame(source: Source, *, study: str | None = None) -> pl.DataFrame:
    """The results frame of a study with one String column per factor (named as the factor).

    Adds ``study``, ``cell_id`` and ``replicate_seed`` from the eval metadata too. Rows of
    logs that carry no ``factors`` metadata keep null factor levels (callers filter them).
    A factor named like a results column (e.g. ``model``) takes that name; the original
    column is kept as ``log_<name>`` (e.g. ``log_model`` holds the Inspect model name).

    Args:
        source: A log file, a log directory, a sequence of them, or a results frame.
        study: Keep only rows whose eval metadata names this study.

    Raises:
        ValueError: A factor is named like a column the analysis depends on
            (``sample_id``, ``score_value``, ...).
    """
    frame = source if isinstance(source, pl.DataFrame) else read_results(source)
    factors = study_factors(frame)
    bad = sorted(PROTECTED.intersection(factors))
    if bad:
        raise ValueError(f"factor names collide with results columns: {bad}; rename them")
    meta = with_metadata_columns(frame, ["study", "cell_id", "replicate_seed", "factors"],
                                 prefix="__meta_")
    levels = with_metadata_columns(meta, factors, source="__meta_factors", prefix="__level_")
    displaced = {f: LOG_PREFIX + f for f in [*factors, "study", "cell_id", "replicate_seed"]
                 if f in frame.columns}
    out = levels.rename(displaced).with_columns(
        pl.col("__meta_study").cast(pl.String).alias("study"),
        pl.col("__meta_cell_id").cast(pl.String).alias("cell_id"),
        pl.col("__meta_replicate_seed").alias("replicate_seed"),
        *[pl.col(f"__level_{f}").cast(pl.String).alias(f) for f in factors],
    )
    out = out.drop([c for c in out.columns if c.startswith("__")])
    if study is not None:
        out = out.filter(pl.col("study") == study)
    return out

