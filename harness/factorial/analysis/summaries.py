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
    wilson_interval,
)


def emm_L(mats: Matrices, term: Term) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """Balanced-grid contrast rows for ``term``'s levels (every factor level combination
    weighted equally): the model contrasts behind model-based pairwise comparisons."""
    keys = [tuple(row) for row in mats.grid_codes[:, list(term)]]
    uniq = sorted(set(keys))
    pos = {k: i for i, k in enumerate(uniq)}
    onehot = np.zeros((len(uniq), len(keys)))
    onehot[[pos[k] for k in keys], np.arange(len(keys))] = 1.0
    L = (onehot @ mats.grid_X) / onehot.sum(axis=1, keepdims=True)
    return uniq, L


def _observed_cells(prep: Prepared, term: Term) -> dict[tuple[str, ...], list[int]]:
    """``term``'s levels -> the observed cells (row indices of ``prep.cells``) at them."""
    out: dict[tuple[str, ...], list[int]] = {}
    cols = [f"_f{i}" for i in term]
    for c, row in enumerate(prep.cells.select(cols).iter_rows()):
        out.setdefault(tuple(str(v) for v in row), []).append(c)
    return out


def _groups_per_cell(prep: Prepared) -> np.ndarray:
    """Independent units behind each cell: distinct items (cell x item groups) when there
    is an item column, else observations (caps the effective n of a proportion)."""
    if prep.groups is not None:
        counts = prep.groups.group_by("_cell").len().sort("_cell")
        out = np.zeros(prep.cells.height)
        out[counts.get_column("_cell").to_numpy()] = counts.get_column("len").to_numpy()
        return out
    return prep.cells.get_column("n").to_numpy().astype(float)


def marginal_means(
    prep: Prepared, mats: Matrices, fit: Fit, terms: list[Term], family: Family, level: float
) -> pl.DataFrame:
    """Estimated marginal means on the response scale, one row per level of each term.

    A level's mean is the model's prediction averaged over the *observed* cells at that
    level, each cell weighted equally (balanced over the cells run: in a full factorial
    the usual balanced EMM, in a fraction no unrun cell is extrapolated). Binomial fits
    average fitted probabilities, never logits, so a separated cell (an oracle fitted
    near 1) moves a mean by at most its share of the cells. The standard error is the
    delta method with the fit's covariance; the interval is :func:`harness.stats.
    wilson_interval` on the effective sample size ``p(1-p) / max(se^2, v_bin)``, with
    ``v_bin`` the variance the level would have if each item of each cell were one
    independent trial (the design effect floored at 1), so it stays inside [0, 1], and a
    level whose every cell sits at 0 or 1 gets the Wilson interval for its item count
    rather than a zero-width one. Gaussian
    fits get the t (normal) interval.
    """
    q = critical_value(fit.df, level)
    cell_n = prep.cells.get_column("n").to_numpy()
    units = _groups_per_cell(prep)
    eta = mats.cell_X @ fit.b
    rounding_var = 1e-14 * max(1.0, float(np.max(np.abs(fit.b))) if len(fit.b) else 1.0) ** 2
    records = []
    for term in terms:
        found = _observed_cells(prep, term)
        order = sorted(found, key=lambda k: [prep.levels[i].index(v)
                                             for i, v in zip(term, k, strict=True)])
        for key in order:
            cells = found[key]
            Xc = mats.cell_X[cells]
            row = {"term": term_name(term, prep.names), "level": ":".join(key),
                   "n": int(cell_n[cells].sum())}
            if family == "binomial":
                mu = expit(eta[cells])
                p = float(mu.mean())
                grad = (mu * (1 - mu)) @ Xc / len(cells)
                se = float(np.sqrt(max(grad @ fit.V @ grad, 0.0)))
                # variance if every unit (item of a cell) were one independent trial: the
                # floor of the design effect (Korn & Graubard 1998), per cell as averaged
                v_bin = float(np.sum(mu * (1 - mu) / units[cells])) / len(cells) ** 2
                var = max(se**2, v_bin)
                n_eff = (float(units[cells].sum()) if var <= 0 or p in (0.0, 1.0)
                         else p * (1 - p) / var)
                lo, hi = wilson_interval(min(max(p, 0.0), 1.0), max(n_eff, 1.0), level)
                link = float(np.log(p / (1 - p))) if 0 < p < 1 else float("nan")
                row.update(estimate=p, se=se, lo=lo, hi=hi, link_estimate=link,
                           link_se=se / (p * (1 - p)) if 0 < p < 1 else float("nan"),
                           n_eff=n_eff)
            else:
                L = Xc.mean(axis=0)
                e = float(L @ fit.b)
                var = float(L @ fit.V @ L)
                # a variance at rounding level (a level whose cells are all one value) is
                # zero: its square root would be noise of ~1e-9 that moves between machines
                se = float(np.sqrt(var)) if var > rounding_var else 0.0
                row.update(estimate=e, se=se, lo=e - q * se, hi=e + q * se)
            records.append(row)
    return pl.DataFrame(records, infer_schema_length=None)


def effects(mats: Matrices, fit: Fit, family: Family, level: float) -> pl.DataFrame:
    q = critical_value(fit.df, level)
    se = np.sqrt(np.maximum(np.diag(fit.V), 0))
    se[list(fit.no_se)] = np.nan
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


