"""Summaries of a fit: estimated marginal means, coefficients, Holm-adjusted pairwise tests.

Why apart from the engines: they read only the fit's (b, V, df), whatever engine made it.
Quantiles, p-values and paired intervals come from :mod:`harness.stats`.
"""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
from scipy.special import expit

from harness.factorial.analysis.fit import Fit
from harness.factorial.analysis.matrices import Matrices
from harness.factorial.analysis.prepare import Family, Prepared, Term, term_name
from harness.stats import (
    critical_value,
    holm_adjust,
    paired_difference_ci,
    paired_t_p_value,
    two_sided_p,
)


def emm_L(mats: Matrices, term: Term) -> tuple[list[tuple[int, ...]], np.ndarray]:
    keys = [tuple(row) for row in mats.grid_codes[:, list(term)]]
    uniq = sorted(set(keys))
    pos = {k: i for i, k in enumerate(uniq)}
    onehot = np.zeros((len(uniq), len(keys)))
    onehot[[pos[k] for k in keys], np.arange(len(keys))] = 1.0
    L = (onehot @ mats.grid_X) / onehot.sum(axis=1, keepdims=True)
    return uniq, L


def marginal_means(
    prep: Prepared, mats: Matrices, fit: Fit, terms: list[Term], family: Family, level: float
) -> pl.DataFrame:
    q = critical_value(fit.df, level)
    counts = prep.cells
    records = []
    for term in terms:
        uniq, L = emm_L(mats, term)
        est = L @ fit.b
        se = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", L, fit.V, L), 0))
        n_by = counts.group_by([f"_f{i}" for i in term]).agg(pl.col("n").sum()).rows()
        n_lookup = {tuple(r[:-1]): r[-1] for r in n_by}
        for key, e, s_ in zip(uniq, est, se, strict=True):
            lv = tuple(prep.levels[i][j] for i, j in zip(term, key, strict=True))
            lo, hi = e - q * s_, e + q * s_
            row = {
                "term": term_name(term, prep.names),
                "level": ":".join(lv),
                "estimate": float(e),
                "se": float(s_),
                "lo": float(lo),
                "hi": float(hi),
                "n": int(n_lookup.get(lv, 0)),
            }
            if family == "binomial":
                row.update(
                    estimate=float(expit(e)),
                    lo=float(expit(lo)),
                    hi=float(expit(hi)),
                    link_estimate=float(e),
                    link_se=float(s_),
                )
            records.append(row)
    return pl.DataFrame(records)


def effects(mats: Matrices, fit: Fit, family: Family, level: float) -> pl.DataFrame:
    q = critical_value(fit.df, level)
    se = np.sqrt(np.maximum(np.diag(fit.V), 0))
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = np.where(se > 0, fit.b / np.where(se > 0, se, 1), np.nan)
    p = two_sided_p(stat, fit.df)
    out = pl.DataFrame(
        {
            "name": mats.colnames,
            "estimate": fit.b,
            "se": se,
            "lo": fit.b - q * se,
            "hi": fit.b + q * se,
            "stat": stat,
            "p": p,
        }
    )
    if family == "binomial":
        out = out.with_columns(pl.col("estimate").exp().alias("odds_ratio"))
    return out.with_columns(pl.lit("logit" if family == "binomial" else "identity").alias("scale"))


def pairwise(
    prep: Prepared, mats: Matrices, fit: Fit, family: Family, level: float
) -> pl.DataFrame:
    records = []
    for i, name in enumerate(prep.names):
        lv = prep.levels[i]
        if len(lv) < 2:
            continue
        block = []
        if "_item" in prep.work.columns:
            wide = (
                prep.work.group_by(["_item", f"_f{i}"])
                .agg(pl.col("_y").mean())
                .pivot(on=f"_f{i}", index="_item", values="_y")
            )
            for a, b in itertools.combinations(lv, 2):
                if a not in wide.columns or b not in wide.columns:
                    continue
                both = wide.select(a, b).drop_nulls()
                if both.height < 2:
                    continue
                est = paired_difference_ci(
                    both.get_column(a).to_numpy(), both.get_column(b).to_numpy(), level=level
                )
                p = paired_t_p_value(est)
                block.append(
                    {
                        "factor": name,
                        "a": a,
                        "b": b,
                        "estimate": float(est.estimate),
                        "se": float(est.se),
                        "lo": float(est.lo),
                        "hi": float(est.hi),
                        "n": both.height,
                        "p": p,
                        "method": "paired_by_item",
                        "scale": "response",
                    }
                )
        elif (i,) in mats.slices:
            _, L = emm_L(mats, (i,))
            q = critical_value(fit.df, level)
            for ia, ib in itertools.combinations(range(len(lv)), 2):
                c = L[ia] - L[ib]
                e = float(c @ fit.b)
                s_ = float(np.sqrt(max(c @ fit.V @ c, 0)))
                stat = e / s_ if s_ > 0 else float("nan")
                p = float(two_sided_p(stat, fit.df))
                block.append(
                    {
                        "factor": name,
                        "a": lv[ia],
                        "b": lv[ib],
                        "estimate": e,
                        "se": s_,
                        "lo": e - q * s_,
                        "hi": e + q * s_,
                        "n": prep.n_obs,
                        "p": p,
                        "method": "model_contrast",
                        "scale": "logit" if family == "binomial" else "response",
                    }
                )
        if block:
            ps = np.array([r["p"] for r in block], dtype=float)
            adj = np.full_like(ps, np.nan)
            ok = np.isfinite(ps)
            if ok.any():
                adj[ok] = holm_adjust(ps[ok])
            for r, a_ in zip(block, adj, strict=True):
                r["p_holm"] = float(a_)
            records += block
    schema = {
        "factor": pl.String,
        "a": pl.String,
        "b": pl.String,
        "estimate": pl.Float64,
        "se": pl.Float64,
        "lo": pl.Float64,
        "hi": pl.Float64,
        "n": pl.Int64,
        "p": pl.Float64,
        "method": pl.String,
        "scale": pl.String,
        "p_holm": pl.Float64,
    }
    return pl.DataFrame(records, schema=schema)


