"""Report sections computed from the scored rows: design, cell means, raw effects, analysis.

Why apart from the views: these are the numbers ``report.json`` holds; Markdown and HTML
only format them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from harness.factorial.report.options import Spec


def clean(value: Any) -> Any:
    """JSON-safe: numpy scalars -> Python, NaN/inf -> None, tuples -> lists, dataclasses."""
    if isinstance(value, Mapping):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean(v) for v in value]
    if hasattr(value, "to_dict") and callable(value.to_dict):
        return clean(value.to_dict())
    if hasattr(value, "__dataclass_fields__"):
        return clean({k: getattr(value, k) for k in value.__dataclass_fields__})
    if hasattr(value, "item") and callable(value.item) and not isinstance(value, str):
        try:
            value = value.item()
        except (TypeError, ValueError):
            return str(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, Path):
        return str(value)
    return str(value)


def estimate(values: Sequence[float], clusters: Sequence[str],
             binary: bool = False) -> dict[str, Any]:
    """Mean and item-clustered CI of one group's scores: for 0/1 scores the clustered
    Wilson interval (:func:`harness.stats.binary_mean_ci`, inside [0, 1] and never of
    zero width), else the clustered t interval (:func:`harness.stats.mean_ci`)."""
    from harness.stats import binary_mean_ci, mean_ci

    if not values:
        return {"mean": None, "se": None, "ci_lower": None, "ci_upper": None}
    if binary:
        est = binary_mean_ci(list(values), cluster=list(clusters))
    else:
        est = mean_ci(list(values), cluster=list(clusters))
    return {
        "mean": clean(float(est.estimate)),
        "se": clean(float(est.se)),
        "ci_lower": clean(float(est.lo)),
        "ci_upper": clean(float(est.hi)),
    }


def group_estimates(
    scored: pl.DataFrame, keys: list[str], spec: Spec
) -> list[tuple[dict[str, str], dict[str, Any]]]:
    """(levels, estimate) per combination of ``keys``, clustered by item."""
    grouped = (
        scored.filter(pl.col(spec.response).is_not_null())
        .group_by(keys)
        .agg(pl.col(spec.response).cast(pl.Float64), pl.col(spec.item).cast(pl.String))
    )
    binary = is_binary_response(scored, spec)
    out = []
    for row in grouped.iter_rows(named=True):
        levels = {k: row[k] for k in keys}
        out.append((levels, estimate(row[spec.response], row[spec.item], binary)))
    return out


def is_binary_response(scored: pl.DataFrame, spec: Spec) -> bool:
    """Every scored value is 0 or 1 (then every mean is a proportion)."""
    values = scored.get_column(spec.response).drop_nulls()
    return bool(len(values)) and bool(values.is_in([0.0, 1.0]).all())



def design_section(scored: pl.DataFrame, spec: Spec, order: dict[str, list[str]]) -> dict[str, Any]:
    """Factors with levels, and one row per design cell (distinct factor levels)."""
    null = pl.col(spec.response).is_null()
    cells = scored.group_by(spec.factors).agg(
        pl.col("cell_id").drop_nulls().unique().sort().alias("cell_ids"),
        pl.col("log_file").n_unique().alias("n_logs"),
        pl.col(spec.item).n_unique().alias("n_items"),
        pl.col("epoch").n_unique().alias("n_epochs"),
        pl.len().alias("n_samples"),
        (~null).sum().alias("n_scored"),
        pl.col("error").is_not_null().sum().alias("errors"),
        (null & pl.col("error").is_null()).sum().alias("unscored"),
        pl.col("status").drop_nulls().unique().sort().alias("status"),
    )
    rows = []
    for row in cells.iter_rows(named=True):
        rows.append({
            "cell": cell_label(row, spec.factors),
            "levels": {f: row[f] for f in spec.factors},
            "cell_ids": row["cell_ids"],
            "n_logs": row["n_logs"],
            "n_items": row["n_items"],
            "n_epochs": row["n_epochs"],
            "n_samples": row["n_samples"],
            "n_scored": row["n_scored"],
            "errors": row["errors"],
            "unscored": row["unscored"],
            "status": row["status"],
        })
    rows.sort(key=lambda r: [order[f].index(r["levels"][f]) for f in spec.factors])
    return {
        "factors": [{"name": f, "levels": order[f]} for f in spec.factors],
        "n_cells": len(rows),
        "n_possible_cells": math.prod(len(order[f]) for f in spec.factors),
        "cells": rows,
    }


def cell_label(levels: Mapping[str, Any], factors: list[str]) -> str:
    return ", ".join(f"{f}={levels[f]}" for f in factors)


def cell_results(scored: pl.DataFrame, design: dict[str, Any], spec: Spec) -> list[dict]:
    """Mean with an item-clustered CI per design cell, in design-table order."""
    estimates = {
        tuple(levels[f] for f in spec.factors): est
        for levels, est in group_estimates(scored, spec.factors, spec)
    }
    empty = {"mean": None, "se": None, "ci_lower": None, "ci_upper": None}
    results = []
    for cell in design["cells"]:
        key = tuple(cell["levels"][f] for f in spec.factors)
        results.append({
            "cell": cell["cell"],
            "levels": cell["levels"],
            **estimates.get(key, empty),
            "n": cell["n_scored"],
            "n_items": cell["n_items"],
            "errors": cell["errors"],
        })
    return results


def effects_section(
    scored: pl.DataFrame, spec: Spec, order: dict[str, list[str]]
) -> dict[str, Any]:
    """Raw level means per factor (main effects) and per factor pair (interactions)."""
    main: dict[str, list[dict[str, Any]]] = {}
    for factor in spec.factors:
        found = {lv[factor]: est for lv, est in group_estimates(scored, [factor], spec)}
        main[factor] = [{"level": lv, **found[lv]} for lv in order[factor] if lv in found]
    pairs: list[dict[str, Any]] = []
    if spec.order >= 2:
        for i, a in enumerate(spec.factors):
            for b in spec.factors[i + 1:]:
                found_ab = {(lv[a], lv[b]): est["mean"]
                            for lv, est in group_estimates(scored, [a, b], spec)}
                pairs.append({
                    "factors": [a, b],
                    "x_levels": order[a],
                    "traces": {lb: [found_ab.get((la, lb)) for la in order[a]]
                               for lb in order[b]},
                })
    return {"main_effects": main, "interactions": pairs}


def _analysed_headline(spec: Spec, varying: list[str]) -> str | None:
    """The factor the analysis' robustness, pair and power sections are about: the chosen
    headline factor when it varies, else the analysis' own default (``model``, if any)."""
    if spec.headline_factor is not None and spec.headline_factor in varying:
        return spec.headline_factor
    return "model" if "model" in varying else None


def run_analysis(scored: pl.DataFrame, spec: Spec) -> tuple[dict | None, str | None]:
    """The analysis dict, or the reason it could not be computed (the report still ships)."""
    from harness.factorial.analysis import analyze

    data = scored.filter(pl.col(spec.response).is_not_null())
    varying = [f for f in spec.factors if data.get_column(f).n_unique() > 1]
    if not varying:
        return None, "no factor varies in the scored data"
    try:
        result = analyze(data, response=spec.response, factors=varying, item=spec.item,
                         family=spec.family,  # type: ignore[arg-type]
                         order=spec.order, item_mode=spec.item_mode,  # type: ignore[arg-type]
                         anova_type=spec.anova_type, seed=spec.seed,
                         model_factor=_analysed_headline(spec, varying))
    except Exception as exc:  # a failed fit must not lose the design and cell tables
        return None, f"{type(exc).__name__}: {exc}"
    return clean(result.to_dict()), None



def report_notes(scored: pl.DataFrame, spec: Spec, analysis: Mapping[str, Any] | None
                 ) -> list[str]:
    """Sentences saying how the report's numbers were computed where it matters: the
    interval for proportions, separation and what was done about it, alias chains, the
    marginal means' weighting and scale, the effect sizes."""
    notes = []
    if is_binary_response(scored, spec):
        notes.append(
            "Scores are 0/1: cell and level CIs are Wilson intervals on the item-clustered "
            "effective sample size (Korn & Graubard 1998), inside [0, 1]; a cell with no "
            "variance (all 0 or all 1) gets the Wilson interval for its number of items.")
    model = (analysis or {}).get("model") or {}
    sep = model.get("separation") or {}
    if sep.get("detected"):
        cells = sep.get("cells") or []
        notes.append(
            "Separation: the logit model fits "
            + (f"{len(cells)} cell(s) ({'; '.join(cells)})" if cells else "some rows")
            + " exactly at 0 or 1, so maximum-likelihood estimates do not exist (terms "
            f"affected: {', '.join(sep.get('terms') or [])}). "
            + str(sep.get("action") or "") + ".")
    if model.get("aliases"):
        notes.append("Aliased terms (indistinguishable on the cells run) are fitted once and "
                     "named by their chain: " + "; ".join(model["aliases"]) + ".")
    if model.get("family") == "binomial" and model.get("estimation") != "glmm":
        notes.append(
            "Estimated marginal means are fitted probabilities averaged over the observed "
            "cells at each level (equal weight per cell), on the response scale; under "
            "separation the Firth fit pulls an all-0/all-1 cell slightly toward 1/2.")
    elif model:
        notes.append(f"Estimated marginal means: {model.get('emm_weights')}.")
    if model.get("effect_sizes"):
        notes.append(f"Effect sizes: {model['effect_sizes']}.")
    if model.get("estimation") == "glmm":
        notes.append("Logit GLMM with random item intercepts"
                     + (" and a seed component" if model.get("seed_variance") is not None
                        else "") + f" ({model.get('method')}); variance shares are on the "
                     "latent (logit) scale with residual pi^2/3.")
    return notes
