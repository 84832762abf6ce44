"""The entry points ``analyze`` and ``analyze_csv``: validate, fit, summarise, assemble.

Why thin: each step lives in its own module; this one only wires them together.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import polars as pl

from harness.factorial.analysis.aliases import alias_chains, chain_label
from harness.factorial.analysis.binomial import fit_binomial
from harness.factorial.analysis.fit import Fit, Problem
from harness.factorial.analysis.gaussian import fit_gaussian
from harness.factorial.analysis.matrices import build_matrices
from harness.factorial.analysis.prepare import (
    Family,
    ItemMode,
    Prepared,
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
    family: Family | Literal["auto"] = "gaussian",
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
    seed: str | None = None,
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
        seed: replicate-seed column; with ``family="binomial"`` and ``item_mode="random"``
            it is a second random intercept (a seed variance component).

    Terms the observed cells cannot tell apart are fitted once, named by their alias
    chain (``A = B:C``, listed in ``model["aliases"]``); a partly aliased term is an
    error naming the terms.
    """
    if family == "auto":  # a 0/1 response gets the logit GLM (Firth under separation)
        family = "binomial" if _binary_response(df, response) else "gaussian"
    if family not in ("gaussian", "binomial"):
        raise ValueError("family is 'gaussian', 'binomial' or 'auto'")
    if anova_type not in (2, 3):
        raise ValueError("anova_type is 2 or 3")
    if item_mode is not None and item_mode not in ("fixed", "cluster", "random"):
        raise ValueError("item_mode is 'fixed', 'cluster', 'random' or None")
    if item_mode is not None and item is None:
        raise ValueError(f"item_mode={item_mode!r} needs an item column")
    prep = prepare(df, response, factors, item, family)
    if seed is not None:
        prep = _with_seed(prep, df, response, factors, item, seed)
    requested = model_terms(len(factors), order, factors, terms)
    mats = build_matrices(prep, requested)
    term_list, chains = alias_chains(mats, requested, factors)
    if len(term_list) < len(requested):
        mats = build_matrices(prep, term_list)
    engine = fit_gaussian if family == "gaussian" else fit_binomial
    fit = engine(Problem(prep, mats, term_list, item_mode, anova_type))
    labels = {term_name(t, factors): chain_label(t, c, factors)
              for t, c in chains.items() if c}
    anova = _relabel(pl.DataFrame(fit.rows, infer_schema_length=None), "term", labels)
    shares = _variance_shares(fit, family, item_mode)

    mf = model_factor if model_factor is not None else ("model" if "model" in factors else None)
    robust: dict[str, Any] = {}
    attributed: dict[str, Any] = {}
    power_out: dict[str, Any] = {}
    if mf is not None:
        if mf not in factors:
            raise ValueError(f"model_factor {mf!r} is not among the factors")
        m = factors.index(mf)
        robust = robustness(prep, m, level=level)
        if len(prep.levels[m]) >= 2:
            pair = pick_pair(prep, m, compare)
            attributed = attribution(prep, m, pair, anova)
            power_out = power_analysis(prep, m, pair, power_diff, alpha, power)

    model = {
        "family": family,
        "link": "logit" if family == "binomial" else "identity",
        "formula": display_formula(response, term_list, factors),
        "terms": [labels.get(term_name(t, factors), term_name(t, factors)) for t in term_list],
        "aliases": [chain_label(t, c, factors) for t, c in chains.items() if c],
        "seed": seed,
        "emm_weights": "equal weight per observed cell (balanced over the cells run)",
        "effect_sizes": (
            "eta2, omega2: non-partial (share of the total SS); partial_eta2, partial_omega2:"
            " partial (term vs residual)" if family == "gaussian" else
            "deviance_r2: chi2 / null deviance (non-partial); partial_deviance_r2: chi2 / "
            "(chi2 + residual deviance); latent_r2, partial_latent_r2: the term's variance "
            "of the linear predictor over the total (non-partial) or over itself + pi^2/3 "
            "(partial), on the logit (latent) scale"
        ),
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
        variance_shares=_relabel(pl.DataFrame(shares), "component", labels),
        marginal_means=_relabel(marginal_means(prep, mats, fit, term_list, family, level),
                                "term", labels),
        pairwise=pairwise(prep, mats, fit, family, level),
        effects=effects(mats, fit, family, level),
        robustness=robust,
        attribution=attributed,
        power=power_out,
        model=model,
    )


def _relabel(frame: pl.DataFrame, column: str, labels: dict[str, str]) -> pl.DataFrame:
    """Aliased terms named by their chain (``A = B:C``)."""
    if not labels or column not in frame.columns:
        return frame
    return frame.with_columns(pl.col(column).replace(labels))


def _with_seed(prep: Prepared, df: pl.DataFrame, response: str, factors: list[str],
               item: str | None, seed: str) -> Prepared:
    """``prep`` with a ``_seed`` column (the replicate seed of each row) for the GLMM."""
    if seed not in df.columns:
        raise ValueError(f"seed column {seed!r} not found")
    seeded = prepare(df.with_columns(pl.concat_str([pl.col(item or response).cast(pl.String),
                                                    pl.col(seed).cast(pl.String)],
                                                   separator="\x1f").alias("__item_seed")),
                     response, factors, "__item_seed", "gaussian")
    pair = seeded.work.get_column("_item").str.split_exact("\x1f", 1)
    if seeded.work.height != prep.work.height:
        raise ValueError("the seed column has nulls where the response does not")
    work = prep.work.with_columns(pair.struct.field("field_1").alias("_seed"))
    return replace(prep, work=work)


def _variance_shares(fit: Fit, family: Family, item_mode: ItemMode | None) -> list[dict[str, Any]]:
    """Each term's, the item's and the residual's share of the total sum of squares (for
    a binomial GLMM: of the total latent-scale variance, with item and seed components)."""
    latent = fit.info.get("latent_shares")
    if latent is not None:
        total = float(sum(fit.info["latent_variance"].values()))
        return [{"component": k, "sum_sq": None, "share": v, "variance": v * total,
                 "scale": "latent"} for k, v in latent.items()]
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


def _binary_response(df: pl.DataFrame, response: str) -> bool:
    """Every non-null value of ``response`` is 0 or 1 (a linear model on such a column gives
    an always-right level the impossible interval [0.86, 1.14])."""
    if response not in df.columns:
        return False
    values = df.get_column(response).drop_nulls()
    return bool(len(values)) and bool(values.cast(pl.Float64).is_in([0.0, 1.0]).all())


def analyze_csv(
    path: str | Path, response: str, factors: list[str], item: str | None = None, **kw: Any
) -> AnalysisResult:
    """``analyze`` on a CSV read with polars; a missing column is named in the error."""
    df = pl.read_csv(path, infer_schema_length=10_000)
    return analyze(df, response, factors, item=item, **kw)
