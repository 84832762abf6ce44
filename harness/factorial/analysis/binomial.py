"""Binomial engine: logit GLM on (successes, trials), Firth-penalised under separation.

Why per cell: a Bernoulli likelihood depends on the rows of a cell only through their
count and number of successes, so the fit on aggregated rows is the fit on every row.

Separation (a cell of only 0s or only 1s that the model can fit exactly: an oracle that
is always right) is detected per term by the linear program of
:func:`harness.stats.separated_rows`. When the full model is separated its
maximum-likelihood estimates do not exist, so every model is then fitted by Firth's
penalised likelihood (:func:`harness.stats.firth_logistic`), whose estimates are finite:
under ``item_mode="cluster"`` a term's p-value is the larger of the item-clustered Wald
test (sandwich from the Bernoulli scores at the Firth estimates, summed by item) and
Heinze & Schemper's penalised likelihood-ratio test, since a sandwich resting on a few
sparse cells can be far too small; otherwise it is the penalised LR test.
``item_mode="random"`` fits a logit GLMM with random item intercepts (and a seed
component when a seed column is given).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from scipy import stats as sps
from scipy.special import expit, xlogy

from harness.factorial.analysis.fit import Fit, Problem, aggregated_rows, residual_row
from harness.factorial.analysis.linalg import clustered_wald, sandwich, wald
from harness.factorial.analysis.matrices import columns, term_sets
from harness.factorial.analysis.prepare import term_name
from harness.stats import binomial_glmm, firth_logistic, separated_rows

LATENT_RESIDUAL = math.pi**2 / 3
"""Variance of the standard logistic distribution: the residual on the latent scale."""


def bernoulli_deviance(s: np.ndarray, n: np.ndarray, mu: np.ndarray) -> float:
    """-2 log-likelihood of s successes in n trials at probabilities mu."""
    mu = np.clip(mu, 1e-15, 1 - 1e-15)
    return float(-2 * np.sum(xlogy(s, mu) + xlogy(n - s, 1 - mu)))


class _Model:
    """One fitted submodel: coefficients, fitted probabilities, deviance, penalised loglik."""

    def __init__(self, b: np.ndarray, mu: np.ndarray, dev: float, pll: float, rank: int,
                 cov: np.ndarray, converged: bool) -> None:
        self.params, self.mu, self.dev, self.pll, self.rank = b, mu, dev, pll, rank
        self.cov_model, self.converged = cov, converged


def fit_binomial(prob: Problem) -> Fit:
    """Logit GLM; item as a fixed sum-to-zero block, a cluster, a random effect, or left out."""
    if prob.item_mode == "random":
        return fit_glmm(prob)
    import statsmodels.api as sm

    prep, mats, terms, item_mode = prob.prep, prob.mats, prob.terms, prob.item_mode
    use_groups = prep.groups is not None and item_mode in ("fixed", "cluster")
    data = aggregated_rows(prob, by_item=use_groups)
    X, n, s = data.X, data.n, np.round(data.mean * data.n)
    item_idx, n_items = data.item_idx, data.n_items
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
    # rows for the separation LP: identical design rows pooled (cells, unless item is fixed)
    if item_mode == "fixed":
        lp_X, lp_s, lp_n = X, s, n
    else:
        lp_X = mats.cell_X
        lp_n = prep.cells.get_column("n").to_numpy().astype(float)
        lp_s = np.round(prep.cells.get_column("mean").to_numpy() * lp_n)
    all_cols = columns(mats, terms) + item_col_list
    sep_rows = separated_rows(lp_X[:, all_cols], lp_s, lp_n)
    firth = bool(sep_rows.any())
    cache: dict[tuple[int, ...], _Model] = {}

    def fit(cols: list[int]) -> _Model:
        key = tuple(cols)
        if key not in cache:
            Xs = X[:, cols]
            rank = int(np.linalg.matrix_rank(Xs))
            if firth:
                f = firth_logistic(Xs, s, n)
                cache[key] = _Model(f.coef, f.mu, bernoulli_deviance(s, n, f.mu),
                                    f.penalized_loglik, rank, f.cov, f.converged)
            else:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res = sm.GLM(np.column_stack([s, n - s]), Xs,
                                 family=sm.families.Binomial()).fit()
                mu = np.asarray(res.mu)
                cache[key] = _Model(np.asarray(res.params), mu, bernoulli_deviance(s, n, mu),
                                    math.nan, rank, np.asarray(res.cov_params()),
                                    bool(getattr(res, "converged", True)))
        return cache[key]

    def cov(model: _Model, cols: list[int]) -> np.ndarray:
        if item_mode != "cluster":
            return model.cov_model
        Xs = X[:, cols]
        mu = model.mu
        bread = np.linalg.pinv(Xs.T @ (Xs * (n * mu * (1 - mu))[:, None]))
        return sandwich(bread, Xs * (s - n * mu)[:, None], item_idx, N, model.rank)

    full = fit(all_cols)
    mean_all = float(s.sum() / n.sum())
    null_dev = bernoulli_deviance(s, n, np.full_like(n, mean_all))
    # a deviance below this is zero up to rounding (a response with no variance, a perfect
    # fit): a ratio of two such numbers is noise that differs between machines, not a share
    tiny = 1e-9 * max(1.0, float(n.sum()))
    eta_parts = _eta_parts(mats, terms, full.params, prep)
    var_eta = float(np.var(sum(eta_parts.values()))) if eta_parts else 0.0
    rows = []
    separated_terms: list[str] = []
    for term, (reduced, full_set) in term_sets(terms, prob.anova_type).items():
        cols_f = columns(mats, full_set) + item_col_list
        cols_r = columns(mats, reduced) + item_col_list
        fit_f = fit(cols_f)
        sl = list(range(mats.slices[term].start, mats.slices[term].stop))
        pos = [cols_f.index(c) for c in sl]
        term_sep = bool(separated_rows(lp_X[:, cols_f], lp_s, lp_n).any()) if firth else False
        if firth:
            # penalised LR: the restricted fit keeps the full model's penalty (logistf)
            free = [i for i in range(len(cols_f)) if i not in pos]
            restricted = firth_logistic(X[:, cols_f], s, n, free=free)
            chi2 = max(2 * (fit_f.pll - restricted.penalized_loglik), 0.0)
        else:
            chi2 = max(fit(cols_r).dev - fit_f.dev, 0.0)
        df = len(pos)
        use_wald = item_mode == "cluster"
        absorbed = False
        if use_wald:
            wald_chi2, dfw, absorbed = clustered_wald(
                fit_f.params, cov(fit_f, cols_f), pos, X[:, cols_f], item_idx, n_items,
                reference=fit_f.cov_model)
        else:
            wald_chi2, dfw = wald(fit_f.params, cov(fit_f, cols_f), pos)
        wald_p = float(sps.chi2.sf(wald_chi2, dfw)) if dfw else float("nan")
        lr_p = float(sps.chi2.sf(chi2, df)) if df else float("nan")
        if not use_wald:
            p_value, p_test = lr_p, "lr-firth" if firth else "lr"
        elif absorbed:
            p_value, p_test = math.nan, "none: the term is the cluster"
        elif firth and dfw:
            # under separation the sandwich rests on a few sparse cells and can be far too
            # small, so a term counts only when the clustered and the penalised-LR tests agree
            p_value, p_test = max(wald_p, lr_p), "max(wald-cluster, lr)-firth"
        elif firth:
            # no clustered variance left in any direction (every outcome fitted exactly):
            # the penalised LR test is the one that still has something to say
            p_value, p_test = lr_p, "lr-firth (no clustered variance)"
        else:
            p_value, p_test = wald_p, "wald-cluster"
        name = term_name(term, prep.names)
        if term_sep:
            separated_terms.append(name)
        part = float(np.var(eta_parts[term])) if term in eta_parts else math.nan
        rows.append(
            {
                "term": name,
                "sum_sq": chi2,
                "df": df,
                "F": None,
                "p": p_value,
                "partial_eta2": None,
                "omega2": None,
                "chi2": chi2,
                "lr_p": lr_p,
                "wald_chi2": wald_chi2,
                "wald_p": wald_p,
                "p_test": p_test,
                "separation": term_sep,
                "deviance_r2": chi2 / null_dev if null_dev > tiny else None,
                "partial_deviance_r2": chi2 / (chi2 + full.dev) if chi2 + full.dev > tiny
                else None,
                "latent_r2": part / (var_eta + LATENT_RESIDUAL),
                "partial_latent_r2": part / (part + LATENT_RESIDUAL),
            }
        )
    item_ss = None
    if item_mode == "fixed":
        noitem = fit(columns(mats, terms))
        item_ss = max(noitem.dev - full.dev, 0.0)
        df_item = full.rank - noitem.rank
        p_lr = float(sps.chi2.sf(item_ss, df_item)) if df_item else float("nan")
        rows.append(
            {
                "term": "item", "sum_sq": item_ss, "df": df_item, "F": None, "p": p_lr,
                "partial_eta2": None, "omega2": None, "chi2": item_ss, "lr_p": p_lr,
                "wald_chi2": None, "wald_p": None, "p_test": "lr", "separation": False,
                "deviance_r2": item_ss / null_dev if null_dev > tiny else None,
                "partial_deviance_r2": None, "latent_r2": None, "partial_latent_r2": None,
            }
        )
    rows.append(residual_row(full.dev, N - full.rank))
    V_full = cov(full, all_cols)
    keep = columns(mats, terms)
    b = np.zeros(base_p)
    V = np.zeros((base_p, base_p))
    b[keep] = full.params[: len(keep)]
    V[np.ix_(keep, keep)] = V_full[: len(keep), : len(keep)]
    sep_cells = _separated_cells(prep, sep_rows) if item_mode != "fixed" else []
    info = {
        "deviance": full.dev,
        "null_deviance": null_dev,
        "df_resid": N - full.rank,
        "pseudo_r2": 1 - full.dev / null_dev if null_dev > tiny else None,
        "aic": full.dev + 2 * full.rank,
        "converged": full.converged,
        "estimation": "firth" if firth else "ml",
        "separation": {
            "detected": firth,
            "terms": separated_terms,
            "cells": sep_cells,
            "n_rows": int(sep_rows.sum()),
            "method": "linear program (Konis 2007)",
            "action": (
                "Firth-penalised logistic fit (Heinze & Schemper 2002) for every model; "
                + ("p-values: item-clustered Wald tests on the Firth estimates"
                   if item_mode == "cluster" else "p-values: penalised likelihood-ratio tests")
            ) if firth else None,
        },
        "latent_variance": {"fixed": var_eta, "residual": LATENT_RESIDUAL},
    }
    return Fit(rows, b, V, math.inf, full.dev, null_dev, item_ss, info)


def _eta_parts(mats: Any, terms: list[Any], params: np.ndarray, prep: Any) -> dict[Any, Any]:
    """Each term's contribution to the linear predictor, per observation (latent scale)."""
    keep = columns(mats, terms)
    b = np.zeros(mats.cell_X.shape[1])
    b[keep] = params[: len(keep)]
    weights = prep.cells.get_column("n").to_numpy().astype(float)
    out = {}
    for t in terms:
        sl = mats.slices[t]
        contrib = mats.cell_X[:, sl] @ b[sl]
        out[t] = np.repeat(contrib, weights.astype(int))
    return out


def _separated_cells(prep: Any, rows: np.ndarray) -> list[str]:
    cols = [f"_f{i}" for i in range(len(prep.names))]
    labels = []
    for hit, row in zip(rows, prep.cells.select(cols).iter_rows(), strict=True):
        if hit:
            labels.append(", ".join(f"{n}={v}" for n, v in zip(prep.names, row, strict=True)))
    return labels


def fit_glmm(prob: Problem) -> Fit:
    """Logit GLMM, random intercept per item (and per seed, when ``_seed`` is in the data)."""
    prep, mats, terms = prob.prep, prob.mats, prob.terms
    if "_item" not in prep.work.columns:
        raise ValueError("item_mode='random' needs an item column")
    import polars as pl

    fcols = [f"_f{i}" for i in range(len(prep.names))]
    raw = prep.work.join(prep.cells.select([*fcols, "_cell"]), on=fcols, how="left")
    cols = columns(mats, terms)
    X = mats.cell_X[raw.get_column("_cell").to_numpy()][:, cols]
    y = raw.get_column("_y").to_numpy()
    groups: dict[str, Any] = {"item": raw.get_column("_item").to_numpy()}
    if "_seed" in raw.columns and raw.get_column("_seed").n_unique() > 1:
        groups["seed"] = raw.get_column("_seed").cast(pl.String).to_numpy()
    res = binomial_glmm(y, X, groups)
    p = mats.cell_X.shape[1]
    b = np.zeros(p)
    V = np.zeros((p, p))
    b[cols] = res["coef"]
    V[np.ix_(cols, cols)] = res["cov"]
    eta_parts = _eta_parts(mats, terms, res["coef"], prep)
    var_eta = float(np.var(sum(eta_parts.values()))) if eta_parts else 0.0
    comps = res["variances"]
    total = var_eta + sum(comps.values()) + LATENT_RESIDUAL
    rows = []
    for term in terms:
        sl = list(range(mats.slices[term].start, mats.slices[term].stop))
        chi2, dfw = wald(b, V, sl)
        part = float(np.var(eta_parts[term]))
        rows.append({
            "term": term_name(term, prep.names), "sum_sq": None, "df": dfw, "F": None,
            "p": float(sps.chi2.sf(chi2, dfw)) if dfw else float("nan"),
            "partial_eta2": None, "omega2": None, "chi2": None, "lr_p": None,
            "wald_chi2": chi2, "wald_p": float(sps.chi2.sf(chi2, dfw)) if dfw else None,
            "p_test": "wald-glmm", "separation": False,
            "deviance_r2": None, "partial_deviance_r2": None,
            "latent_r2": part / total, "partial_latent_r2": part / (part + LATENT_RESIDUAL),
        })
    rows.append(residual_row(None, prep.n_obs - len(cols)))  # type: ignore[arg-type]
    mu = expit(X @ res["coef"])
    dev = bernoulli_deviance(y, np.ones_like(y), mu)
    info = {
        "estimation": "glmm",
        "method": res["method"],
        "latent_variance": {"fixed": var_eta, **{k: v for k, v in comps.items()},
                            "residual": LATENT_RESIDUAL},
        "item_variance": comps.get("item"),
        "seed_variance": comps.get("seed"),
        "icc": comps.get("item", 0.0) / total,
        "converged": True,
    }
    shares = {t: float(np.var(eta_parts[t])) for t in terms}
    info["latent_shares"] = {
        **{term_name(t, prep.names): v / total for t, v in shares.items()},
        **{k: v / total for k, v in comps.items()},
        "Residual": LATENT_RESIDUAL / total,
    }
    return Fit(rows, b, V, math.inf, dev, dev, None, info)
