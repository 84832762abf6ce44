"""The entry points ``analyze`` and ``analyze_csv``: validate, fit, summarise, assemble.

Why thin: each step lives in its own module; this one only wires them together.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from harness.factorial.analysis.binomial import fit_binomial
from harness.factorial.analysis.fit import Fit, Problem
from harness.factorial.analysis.gaussian import fit_gaussian
from harness.factorial.analysis.matrices import build_matrices
from harness.factorial.analysis.prepare import (
    Family,
    ItemMode,
    display_formula,
    model_terms,
    prepare,
    term_name,
)
from harness.factorial.analysis.result import AnalysisResult
from harness.factorial.analysis.robustness import (
    attribution,
    pick_pair,
    power_analysis,
    robustness,
)
from harness.factorial.analysis.summaries import effects, marginal_means, pairwise


def analyze(
    df: pl.DataFrame,
    response: str,
    factors: list[str],
    item: str | None = None,
    family: Family = "gaussian",
    order: int = 2,
    item_mode: ItemMode | None = None,
    anova_type: int = 2,
    *,
    terms: list[str] | None = None,
    model_factor: str | None = None,
    compare: tuple[str, str] | None = None,
    power_diff: float | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    level: float = 0.95,
) -> AnalysisResult:
    """Analyse a factorial study (one row per observation) and return every summary.

    Args:
        df: one row per scored sample; factor columns, the response and optionally an item id.
        response: the score column (0/1 for ``family="binomial"``).
        factors: factor columns; ``terms``, if given (e.g. ``["A", "C", "A:C"]``), replaces
            the all-interactions-up-to-``order`` model.
        item: item id column: pairs comparisons and power, and enters the model per
            ``item_mode`` (``"fixed"``, ``"cluster"``, ``"random"``; None: not modelled).
        anova_type: 2 or 3.
        model_factor: the factor holding models for robustness/attribution/power
            (default ``"model"`` when present).
        compare: the two models whose gap is attributed (default: the top two).
        power_diff: the difference to power for (default: the observed gap).
    """
    if family not in ("gaussian", "binomial"):
        raise ValueError("family is 'gaussian' or 'binomial'")
    if anova_type not in (2, 3):
        raise ValueError("anova_type is 2 or 3")
    if item_mode is not None and item_mode not in ("fixed", "cluster", "random"):
        raise ValueError("item_mode is 'fixed', 'cluster', 'random' or None")
    if item_mode is not None and item is None:
        raise ValueError(f"item_mode={item_mode!r} needs an item column")
    prep = prepare(df, response, factors, item, family)
    term_list = model_terms(len(factors), order, factors, terms)
    mats = build_matrices(prep, term_list)
    engine = fit_gaussian if family == "gaussian" else fit_binomial
    fit = engine(Problem(prep, mats, term_list, item_mode, anova_type))
    anova = pl.DataFrame(fit.rows, infer_schema_length=None)
    shares = _variance_shares(fit, family, item_mode)

    mf = model_factor if model_factor is not None else ("model" if "model" in factors else None)
    robust: dict[str, Any] = {}
    attributed: dict[str, Any] = {}
    power_out: dict[str, Any] = {}
    if mf is not None:
        if mf not in factors:
            raise ValueError(f"model_factor {mf!r} is not among the factors")
        m = factors.index(mf)
        robust = robustness(prep, m)
        if len(prep.levels[m]) >= 2:
            pair = pick_pair(prep, m, compare)
            attributed = attribution(prep, m, pair, anova)
            power_out = power_analysis(prep, m, pair, power_diff, alpha, power)

    model = {
        "family": family,
        "link": "logit" if family == "binomial" else "identity",
        "formula": display_formula(response, term_list, factors),
        "terms": [term_name(t, factors) for t in term_list],
        "anova_type": anova_type,
        "item": item,
        "item_mode": item_mode,
        "n_obs": prep.n_obs,
        "n_cells": prep.cells.height,
        "n_items": len(prep.items) if item else None,
        "n_dropped": df.height - prep.n_obs,
        "errored_policy": prep.errored_policy,
        "n_errored": prep.n_errored,
        "level": level,
        "levels": {n: lv for n, lv in zip(factors, prep.levels, strict=True)},
        **fit.info,
    }
    return AnalysisResult(
        anova=anova,
        variance_shares=pl.DataFrame(shares),
        marginal_means=marginal_means(prep, mats, fit, term_list, family, level),
        pairwise=pairwise(prep, mats, fit, family, level),
        effects=effects(mats, fit, family, level),
        robustness=robust,
        attribution=attributed,
        power=power_out,
        model=model,
    )


def _variance_shares(fit: Fit, family: Family, item_mode: ItemMode | None) -> list[dict[str, Any]]:
    """Each term's, the item's and the residual's share of the total sum of squares."""
    shares = [
        {"component": r["term"], "sum_sq": r["sum_sq"], "share": r["sum_sq"] / fit.total_ss}
        for r in fit.rows
        if r["term"] not in ("Residual", "item") and fit.total_ss > 0
    ]
    if fit.item_ss is not None and fit.total_ss > 0:
        shares.append(
            {"component": "item", "sum_sq": fit.item_ss, "share": fit.item_ss / fit.total_ss}
        )
    resid = fit.residual_ss
    if family == "gaussian" and fit.item_ss is not None and item_mode not in ("fixed", "random"):
        resid = fit.residual_ss - fit.item_ss
    if fit.total_ss > 0:
        shares.append({"component": "Residual", "sum_sq": resid, "share": resid / fit.total_ss})
    return shares


def analyze_csv(
    path: str | Path, response: str, factors: list[str], item: str | None = None, **kw: Any
) -> AnalysisResult:
    """``analyze`` on a CSV read with polars; a missing column is named in the error."""
    df = pl.read_csv(path, infer_schema_length=10_000)
    return analyze(df, response, factors, item=item, **kw)
