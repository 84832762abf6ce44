"""Binomial engine: logit GLM on (successes, trials) per cell, likelihood-ratio and Wald tests.

Why per cell: a Bernoulli likelihood depends on the rows of a cell only through their
count and number of successes, so the MLE on aggregated rows is the MLE on every row.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from scipy import stats as sps
from scipy.special import xlogy

from harness.factorial.analysis.fit import Fit, Problem, aggregated_rows, residual_row
from harness.factorial.analysis.linalg import sandwich, wald
from harness.factorial.analysis.matrices import columns, term_sets
from harness.factorial.analysis.prepare import term_name

SEPARATION_EPS = 1e-6
"""A fitted cell probability this close to 0 or 1 counts as (quasi-)separation."""


def bernoulli_deviance(s: np.ndarray, n: np.ndarray, mu: np.ndarray) -> float:
    """-2 log-likelihood of s successes in n trials at probabilities mu."""
    mu = np.clip(mu, 1e-15, 1 - 1e-15)
    return float(-2 * np.sum(xlogy(s, mu) + xlogy(n - s, 1 - mu)))


def fit_binomial(prob: Problem) -> Fit:
    """Logit GLM; item as a fixed sum-to-zero block, a cluster, or left out."""
    import statsmodels.api as sm

    prep, mats, terms, item_mode = prob.prep, prob.mats, prob.terms, prob.item_mode
    if item_mode == "random":
        raise ValueError(
            "item_mode='random' is a linear mixed model; for 0/1 scores use item_mode='cluster'"
            " (cluster-robust) or 'fixed'"
        )
    use_groups = prep.groups is not None and item_mode in ("fixed", "cluster")
    data = aggregated_rows(prob, by_item=use_groups)
    X, n, s = data.X, data.n, data.mean * data.n
    item_idx, n_items = data.item_idx, data.n_items
    s = np.round(s)
    p_item = 0
    if item_mode == "fixed":
        # sum-to-zero item columns: item g < G-1 -> e_g, last item -> all -1
        p_item = n_items - 1
        item_cols = np.zeros((len(n), p_item))
        last = item_idx == n_items - 1
        item_cols[~last, item_idx[~last]] = 1.0
        item_cols[last, :] = -1.0
        X = np.hstack([X, item_cols])
    base_p = mats.cell_X.shape[1]
    item_col_list = list(range(base_p, base_p + p_item))
    N = prep.n_obs
    cache: dict[tuple[int, ...], tuple[float, int, Any]] = {}

    def fit(cols: list[int]) -> tuple[float, int, Any]:
        key = tuple(cols)
        if key not in cache:
            Xs = X[:, cols]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = sm.GLM(np.column_stack([s, n - s]), Xs, family=sm.families.Binomial()).fit()
            rank = int(np.linalg.matrix_rank(Xs))
            cache[key] = (bernoulli_deviance(s, n, np.asarray(res.mu)), rank, res)
        return cache[key]

    def cov(res: Any, cols: list[int]) -> np.ndarray:
        if item_mode != "cluster":
            return np.asarray(res.cov_params())
        Xs = X[:, cols]
        mu = np.asarray(res.mu)
        bread = np.linalg.pinv(Xs.T @ (Xs * (n * mu * (1 - mu))[:, None]))
        return sandwich(
            bread, Xs * (s - n * mu)[:, None], item_idx, N, int(np.linalg.matrix_rank(Xs))
        )

    all_cols = columns(mats, terms) + item_col_list
    dev_all, rank_all, res_all = fit(all_cols)
    mean_all = float(s.sum() / n.sum())
    null_dev = bernoulli_deviance(s, n, np.full_like(n, mean_all))
    rows = []
    for term, (reduced, full) in term_sets(terms, prob.anova_type).items():
        cols_f = columns(mats, full) + item_col_list
        cols_r = columns(mats, reduced) + item_col_list
        dev_f, rank_f, res_f = fit(cols_f)
        dev_r, rank_r, _ = fit(cols_r)
        chi2, df = max(dev_r - dev_f, 0.0), rank_f - rank_r
        sl = list(range(mats.slices[term].start, mats.slices[term].stop))
        wald_chi2, dfw = wald(
            np.asarray(res_f.params), cov(res_f, cols_f), [cols_f.index(c) for c in sl]
        )
        wald_p = float(sps.chi2.sf(wald_chi2, dfw)) if dfw else float("nan")
        lr_p = float(sps.chi2.sf(chi2, df)) if df else float("nan")
        # (quasi-)separation: a cell fitted at p = 0 or 1 (e.g. an agent that is always
        # right) sends the coefficients and their SEs to infinity, and the Wald test to
        # p ~ 1 whatever the data say (Hauck-Donner); the likelihood-ratio test stays valid
        mu_f = np.asarray(res_f.mu)
        separated = bool(np.any((mu_f < SEPARATION_EPS) | (mu_f > 1 - SEPARATION_EPS)))
        use_wald = item_mode == "cluster" and not separated
        rows.append(
            {
                "term": term_name(term, prep.names),
                "sum_sq": chi2,
                "df": df,
                "F": None,
                "p": wald_p if use_wald else lr_p,
                "partial_eta2": None,
                "omega2": None,
                "chi2": chi2,
                "lr_p": lr_p,
                "wald_chi2": wald_chi2,
                "wald_p": wald_p,
                "p_test": "wald-cluster" if use_wald else "lr",
                "separation": separated,
            }
        )
    item_ss = None
    if item_mode == "fixed":
        dev_noitem, rank_noitem, _ = fit(columns(mats, terms))
        item_ss = max(dev_noitem - dev_all, 0.0)
        df_item = rank_all - rank_noitem
        p_lr = float(sps.chi2.sf(item_ss, df_item)) if df_item else float("nan")
        rows.append(
            {
                "term": "item",
                "sum_sq": item_ss,
                "df": df_item,
                "F": None,
                "p": p_lr,
                "partial_eta2": None,
                "omega2": None,
                "chi2": item_ss,
                "lr_p": p_lr,
                "wald_chi2": None,
                "wald_p": None,
                "p_test": "lr",
                "separation": False,
            }
        )
    rows.append(residual_row(dev_all, N - rank_all))
    b_full = np.asarray(res_all.params)
    V_full = cov(res_all, all_cols)
    keep = columns(mats, terms)
    b = np.zeros(base_p)
    V = np.zeros((base_p, base_p))
    b[keep] = b_full[: len(keep)]
    V[np.ix_(keep, keep)] = V_full[: len(keep), : len(keep)]
    info = {
        "deviance": dev_all,
        "null_deviance": null_dev,
        "df_resid": N - rank_all,
        "pseudo_r2": 1 - dev_all / null_dev if null_dev > 0 else None,
        "aic": dev_all + 2 * rank_all,
        "converged": bool(getattr(res_all, "converged", True)),
    }
    return Fit(rows, b, V, math.inf, dev_all, null_dev, item_ss, info)


