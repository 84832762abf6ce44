"""A report's cost section (issue 51 item 8): per design cell, tokens, seconds and, given
an Inspect model-cost config, dollars per sample, with score per dollar and cost per point.

Why opt-in (``harness study report --cost`` or ``--pricing FILE``): the section reads the
same results frame as the rest of the report, but committed reports predate it, and a
report must rebuild byte for byte from the command it recorded; asking for it records it.
The pricing (:mod:`harness.cost`) is copied into the section, so the numbers can be checked
without the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from harness.cost import Price, cost_summary, load_pricing, price_for
from harness.factorial.report.options import Spec

__all__ = ["cost_section"]

_RATIOS = ("score_per_dollar", "dollars_per_point", "tokens_per_point")


def cost_section(scored: pl.DataFrame, spec: Spec, design: dict[str, Any],
                 pricing: str | Path | None) -> dict[str, Any]:
    """One row per design cell (design-table order): samples, tokens, input and output
    tokens, working and total seconds and dollars per sample, the cell's mean score, and
    score per dollar with dollars and tokens per point (left out, null, for a
    lower-is-better score: a ratio of an error or a time to cost ranks nothing)."""
    prices: dict[str, Price] = load_pricing(pricing) if pricing else {}
    # the Inspect model name: a factor named ``model`` displaces it to ``log_model``
    model_column = "log_model" if "log_model" in scored.columns else "model"
    table = cost_summary(scored, spec.factors, prices, score=spec.response,
                         model_column=model_column)
    if spec.lower_is_better:
        table = table.with_columns(*[pl.lit(None, dtype=pl.Float64()).alias(c)
                                     for c in _RATIOS])
    by_levels = {tuple(str(r[f]) for f in spec.factors): r for r in table.iter_rows(named=True)}
    cells = []
    for cell in design["cells"]:
        row = by_levels.get(tuple(str(cell["levels"][f]) for f in spec.factors))
        if row is not None:
            cells.append({"cell": cell["cell"], "levels": cell["levels"],
                          **{k: v for k, v in row.items() if k not in spec.factors}})
    models = sorted(scored.get_column(model_column).drop_nulls().unique().to_list())
    used = {m: vars(p) for m in models if (p := price_for(prices, m)) is not None}
    # the file's name, not its path (the path depends on where the command ran); the
    # prices themselves are recorded beside it
    return {"pricing_file": Path(pricing).name if pricing else None,
            "prices": used, "unpriced_models": [m for m in models if m not in used],
            "cells": cells}
