"""Linear-model engine: exact sums of squares from aggregated cells, item as block or cluster.

Why aggregated: with factors as the only regressors every row of a cell (or cell x item
group) shares its design row, so RSS = within SS + sum n (ybar - x b)^2 is exact from the
per-row counts and means; only the random-intercept model reads every observation.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import polars as pl
from scipy import stats as sps

from harness.factorial.analysis.fit import Fit, Problem, aggregated_rows, anova_row, residual_row
from harness.factorial.analysis.linalg import (
    cluster_sum,
    clustered_wald,
    demeaner,
    drop_zero_variance,
    sandwich,
    varies_within,
    wald,
    wls,
)
from harness.factorial.analysis.matrices import Matrices, columns, term_sets
from harness.factorial.analysis.prepare import Prepared, term_name


def fit_gaussian(prob: Problem) -> Fit:
    """Least squares with type II/III sums of squares; item fixed, clustered or random."""
    prep, mats, terms, item_mode = prob.prep, prob.mats, prob.terms, prob.item_mode
    use_groups = prep.groups is not None
    data = aggregated_rows(prob, by_item=use_groups)
    X, y, w, within = data.X, data.mean, data.n, data.within_ss
    item_idx, n_items = data.item_idx, data.n_items
    N = prep.n_obs
    grand = float(np.sum(w * y) / np.sum(w))
    total_ss = within + float(np.sum(w * (y - grand) ** 2))
    absorb = item_mode in ("fixed", "random")

    demean = demeaner(item_idx, w, n_items) if use_groups else None
    Xd = demean(X) if demean else None
    yd = demean(y) if demean else None
    cache: dict[tuple[tuple[int, ...], bool], tuple[float, int]] = {}

    def rss(cols: list[int], absorbed: bool) -> tuple[float, int]:
        key = (tuple(cols), absorbed)
        if key not in cache:
            if absorbed:
                assert Xd is not None and yd is not None
                _, r, rank = wls(Xd[:, cols], yd, w)
                rank += n_items
            else:
                _, r, rank = wls(X[:, cols], y, w)
            cache[key] = (within + float(np.sum(w * r**2)), rank)
        return cache[key]

    all_cols = columns(mats, terms)
    rss_all, rank_all = rss(all_cols, absorb)
    df_res = N - rank_all
    mse = rss_all / df_res if df_res > 0 else float("nan")

    # coefficients and their covariance for effects / means
    info: dict[str, Any] = {}
    no_se: tuple[int, ...] = ()
    if absorb and item_mode == "fixed":
        assert Xd is not None and yd is not None
        slopes = [c for c in all_cols if c != 0]
        b_s, _, _ = wls(Xd[:, slopes], yd, w)
        b = np.zeros(X.shape[1])
        b[slopes] = b_s
        alpha = cluster_sum((w * (y - X @ b))[:, None], item_idx, n_items)[:, 0]
        wsum = cluster_sum(w[:, None], item_idx, n_items)[:, 0]
        b[0] = float(np.mean(alpha / wsum))
        V = np.zeros((X.shape[1], X.shape[1]))
        Xs = Xd[:, slopes]
        V[np.ix_(slopes, slopes)] = mse * np.linalg.pinv(Xs.T @ (Xs * w[:, None]))
        V[0, 0] = mse / N
        df_t = float(df_res)
    else:
        b, resid, rank = wls(X, y, w)
        bread = np.linalg.pinv(X.T @ (X * w[:, None]))
        if item_mode == "cluster":
            V = sandwich(bread, X * (w * resid)[:, None], item_idx, N, rank)
            if mse > 0:  # model-based scale: within-cell and between-cell residual
                b, V, none = drop_zero_variance(b, V, mse * bread)
                absorbed = none & ~varies_within(X, item_idx, n_items)
                no_se = tuple(int(i) for i in np.flatnonzero(absorbed))
            df_t = float(n_items - 1)
        else:
            V = mse * bread
            df_t = float(df_res)

    mixed = None
    if item_mode == "random":
        mixed = fit_mixed(prep, mats, all_cols)
        b = np.zeros(X.shape[1])
        V = np.zeros((X.shape[1], X.shape[1]))
        b[all_cols] = mixed["b"]
        V[np.ix_(all_cols, all_cols)] = mixed["V"]
        df_t = math.inf
        info.update(mixed["info"])

    rows = []
    for term, (reduced, full) in term_sets(terms, prob.anova_type).items():
        cols_f, cols_r = columns(mats, full), columns(mats, reduced)
        rss_f, rank_f = rss(cols_f, absorb)
        rss_r, rank_r = rss(cols_r, absorb)
        ss, df = max(rss_r - rss_f, 0.0), rank_f - rank_r
        sl = list(range(mats.slices[term].start, mats.slices[term].stop))
        if item_mode == "cluster":
            b_f, r_f, rk = wls(X[:, cols_f], y, w)
            Xf = X[:, cols_f]
            bread_f = np.linalg.pinv(Xf.T @ (Xf * w[:, None]))
            Vf = sandwich(bread_f, Xf * (w * r_f)[:, None], item_idx, N, rk)
            pos = [cols_f.index(c) for c in sl]
            # the model-based covariance sets the scale of "zero variance" (see wald)
            mse_f = float(np.sum(w * r_f**2)) / max(N - rk, 1)
            chi2, dfw, _ = clustered_wald(b_f, Vf, pos, Xf, item_idx, n_items,
                                          reference=mse_f * bread_f if mse_f > 0 else None)
            F = chi2 / dfw if dfw else float("nan")
            p = float(sps.f.sf(F, dfw, n_items - 1)) if dfw else float("nan")
        elif item_mode == "random":
            chi2, dfw = wald(b, V, sl)
            F = chi2 / dfw if dfw else float("nan")
            p = float(sps.chi2.sf(chi2, dfw)) if dfw else float("nan")
        else:
            F = (ss / df) / mse if df and mse > 0 else float("nan")
            p = float(sps.f.sf(F, df, df_res)) if df and mse > 0 else float("nan")
        rows.append(anova_row(term_name(term, prep.names), ss, df, F, p, rss_all, mse, total_ss,
                             N))

    item_ss = None
    if use_groups:
        rss_noitem, rank_noitem = rss(all_cols, False)
        rss_item, rank_item = rss(all_cols, True)
        item_ss = max(rss_noitem - rss_item, 0.0)
        if absorb:
            df_item = rank_item - rank_noitem
            if item_mode == "fixed":
                F = (item_ss / df_item) / mse if df_item and mse > 0 else float("nan")
                p = float(sps.f.sf(F, df_item, df_res)) if df_item and mse > 0 else float("nan")
            else:
                F, p = float("nan"), float("nan")
            rows.append(anova_row("item", item_ss, df_item, F, p, rss_all, mse, total_ss, N))
    rows.append(residual_row(rss_all, df_res))
    info.update(
        {"df_resid": df_res, "mse": mse, "r2": 1 - rss_all / total_ss if total_ss else None}
    )
    return Fit(rows, b, V, df_t, rss_all, total_ss, item_ss, info, no_se)


def fit_mixed(prep: Prepared, mats: Matrices, cols: list[int]) -> dict[str, Any]:
    """Random intercept per item (statsmodels MixedLM, REML) on every row."""
    import statsmodels.api as sm

    fcols = [f"_f{i}" for i in range(len(prep.names))]
    item_index = pl.DataFrame({"_item": prep.items, "_item_idx": np.arange(len(prep.items))})
    raw = prep.work.join(prep.cells.select([*fcols, "_cell"]), on=fcols).join(
        item_index, on="_item"
    )
    X = mats.cell_X[raw.get_column("_cell").to_numpy()][:, cols]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sm.MixedLM(
            raw.get_column("_y").to_numpy(), X, groups=raw.get_column("_item_idx").to_numpy()
        ).fit(reml=True)
    p = X.shape[1]
    item_var = float(np.asarray(res.cov_re)[0, 0])
    resid_var = float(res.scale)
    return {
        "b": np.asarray(res.fe_params),
        "V": np.asarray(res.cov_params())[:p, :p],
        "info": {
            "item_variance": item_var,
            "residual_variance": resid_var,
            "icc": item_var / (item_var + resid_var) if item_var + resid_var > 0 else None,
            "converged": bool(res.converged),
        },
    }


