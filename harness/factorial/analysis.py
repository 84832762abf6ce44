"""Factorial analysis of evaluation scores: ANOVA / logit GLM, effects, robustness, attribution.

The question a factorial study answers is *which evaluation choices move the score, and
does a headline gap between two models survive them*. ``analyze`` fits a linear model
(continuous scores) or a binomial logit GLM (0/1 scores) with factor main effects and
interactions up to ``order``, and reports the ANOVA table (type II or III), effect sizes,
variance shares, estimated marginal means, Holm-corrected pairwise comparisons (paired by
item), robustness of model rankings across setup factors (spread, CPS, Kendall W/tau, rank
flips), the attribution of a gap between two models, and the items needed for a target
difference.

Why it is fast: with factors as the only regressors, the design matrix is constant within
a cell, so every sum of squares is exact from per-cell counts, means and within-cell sums
of squares (``RSS = within SS + sum_c n_c (ybar_c - x_c b)^2``), and a binomial GLM is the
same MLE on (successes, trials) per cell. Data are aggregated with polars to cells (or to
cell x item groups when the item enters the model); patsy only ever sees the small table
of distinct cells. A fixed item block is absorbed by weighted within-item demeaning
(Frisch-Waugh-Lovell), cluster-robust covariances are sandwich estimates from per-group
scores, and only the random-intercept model (statsmodels ``MixedLM``) reads every row.

Factor names never enter a formula: columns are renamed to internal identifiers before
patsy sees them (a factor called ``C``, ``Q`` or ``my factor`` is safe), and every table
reports the plain names (``A``, ``B``, ``A:B``). ``model["formula"]`` shows the model with
``Q("...")`` quoting for display.

Statistical conventions (so numbers can be checked against textbooks and statsmodels):
- Type II: SS(T | all terms not containing T); type III: SS(T | all other terms) with
  sum-to-zero contrasts (used for both; type II does not depend on the coding).
- partial eta^2 = SS / (SS + SS_resid); omega^2 = (SS - df MS_resid) / (SS_total +
  MS_resid), floored at 0.
- ``item_mode``: ``"fixed"`` adds item as an additive block (an ANOVA row); ``"cluster"``
  keeps the point estimates and replaces F tests by cluster-robust Wald tests (df2 = items
  - 1); ``"random"`` fits a random intercept per item (MixedLM, REML): SS columns are the
  fixed-block decomposition, F and p are Wald tests on the mixed model. ``None`` leaves the
  item out of the model (it is still used to pair comparisons and for power).
- Binomial: ``sum_sq`` is the likelihood-ratio chi^2 (deviance drop), ``p`` its p-value
  (the cluster-robust Wald p-value under ``"cluster"``); ``wald_chi2``/``wald_p`` are
  given too; effects are on the logit scale; marginal means are probabilities with CIs
  transformed from the logit scale.
- Estimated marginal means average the model's predictions over a balanced grid of all
  factor levels (and over items with equal weight). With a fixed item block their
  intercept variance is taken as MS_resid / N, exact when every item is seen equally in
  every cell.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
import patsy
import polars as pl
from scipy import sparse
from scipy import stats as sps
from scipy.special import expit, xlogy

from harness.stats import (
    holm_adjust,
    items_needed,
    kendall_tau,
    kendall_w,
    paired_difference_ci,
)

Family = Literal["gaussian", "binomial"]
ItemMode = Literal["fixed", "cluster", "random"]
Term = tuple[int, ...]

#: Names patsy would read as its own functions; shown quoted in the display formula.
_PATSY_NAMES = {"C", "Q", "I", "Sum", "Treatment", "Poly", "Helmert", "Diff", "np", "center"}


@dataclass
class AnalysisResult:
    """Everything ``analyze`` found; ``to_dict`` is the stable JSON form."""

    anova: pl.DataFrame
    variance_shares: pl.DataFrame
    marginal_means: pl.DataFrame
    pairwise: pl.DataFrame
    effects: pl.DataFrame
    robustness: dict[str, Any]
    attribution: dict[str, Any]
    power: dict[str, Any]
    model: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable: NaN and infinities become None."""
        return _clean(
            {
                "anova": self.anova.to_dicts(),
                "variance_shares": self.variance_shares.to_dicts(),
                "marginal_means": self.marginal_means.to_dicts(),
                "pairwise": self.pairwise.to_dicts(),
                "effects": self.effects.to_dicts(),
                "robustness": self.robustness,
                "attribution": self.attribution,
                "power": self.power,
                "model": self.model,
            }
        )


def _clean(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_clean(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


# ---------------------------------------------------------------------------------------
# data preparation


@dataclass
class _Prepared:
    names: list[str]
    levels: list[list[str]]
    cells: pl.DataFrame  # _f0.._fk (str), _cell, n, mean, ss  (sorted by _cell)
    groups: pl.DataFrame | None  # _cell, _item_idx, n, mean, ss
    work: pl.DataFrame  # _f*, _y, [_item]
    n_obs: int
    items: list[str]


def _prepare(
    df: pl.DataFrame, response: str, factors: Sequence[str], item: str | None, family: Family
) -> _Prepared:
    needed = [response, *factors, *([item] if item else [])]
    for column in needed:
        if column not in df.columns:
            raise ValueError(f"column {column!r} not found (have: {df.columns})")
    if len(set(factors)) != len(factors) or (item and item in factors) or response in factors:
        raise ValueError("factors, item and response must be distinct columns")
    fcols = [f"_f{i}" for i in range(len(factors))]
    levels = [
        df.get_column(f).drop_nulls().unique().sort().cast(pl.String).to_list() for f in factors
    ]
    work = df.select(
        *[pl.col(f).cast(pl.String).alias(c) for f, c in zip(factors, fcols, strict=True)],
        pl.col(response).cast(pl.Float64).alias("_y"),
        *([pl.col(item).cast(pl.String).alias("_item")] if item else []),
    ).drop_nulls()
    if work.height == 0:
        raise ValueError("no complete rows to analyse")
    if family == "binomial":
        bad = work.filter(~pl.col("_y").is_in([0.0, 1.0])).height
        if bad:
            raise ValueError(f"family='binomial' needs 0/1 responses; {bad} rows are not")
    agg = [
        pl.len().alias("n"),
        pl.col("_y").mean().alias("mean"),
        (pl.col("_y").var(ddof=0) * pl.len()).alias("ss"),
    ]
    cells = (
        work.group_by(fcols)
        .agg(agg)
        .sort(fcols)
        .with_row_index("_cell")
        .with_columns(pl.col("_cell").cast(pl.Int64))
    )
    groups = None
    items: list[str] = []
    if item:
        items = work.get_column("_item").unique().sort().to_list()
        item_index = pl.DataFrame({"_item": items, "_item_idx": np.arange(len(items))})
        groups = (
            work.group_by([*fcols, "_item"])
            .agg(agg)
            .join(cells.select([*fcols, "_cell"]), on=fcols)
            .join(item_index, on="_item")
            .sort(["_cell", "_item_idx"])
            .select(["_cell", "_item_idx", "n", "mean", "ss"])
        )
    return _Prepared(list(factors), levels, cells, groups, work, work.height, items)


def _terms(k: int, order: int, names: Sequence[str], terms: Sequence[str] | None) -> list[Term]:
    if terms is None:
        if order < 1:
            raise ValueError("order must be >= 1")
        return [t for r in range(1, min(order, k) + 1) for t in itertools.combinations(range(k), r)]
    index = {n: i for i, n in enumerate(names)}
    out: list[Term] = []
    for text in terms:
        parts = [p.strip() for p in text.split(":")]
        missing = [p for p in parts if p not in index]
        if missing:
            raise ValueError(f"term {text!r} names unknown factor(s) {missing}")
        out.append(tuple(sorted(index[p] for p in parts)))
    return sorted(set(out), key=lambda t: (len(t), t))


def _term_name(term: Term, names: Sequence[str]) -> str:
    return ":".join(names[i] for i in term)


def _display_formula(response: str, terms: Sequence[Term], names: Sequence[str]) -> str:
    def q(name: str) -> str:
        ok = name.isidentifier() and name not in _PATSY_NAMES
        return name if ok else f"Q({json.dumps(name)})"

    rhs = " + ".join(":".join(q(names[i]) for i in t) for t in terms) or "1"
    return f"{q(response)} ~ {rhs}"


# ---------------------------------------------------------------------------------------
# design matrices (patsy on distinct cells only)


@dataclass
class _Matrices:
    grid_codes: np.ndarray  # (n_grid, k) level indices
    grid_X: np.ndarray
    cell_X: np.ndarray
    slices: dict[Term, slice]  # () -> intercept
    colnames: list[str]


def _matrices(prep: _Prepared, terms: Sequence[Term]) -> _Matrices:
    k = len(prep.names)
    fcols = [f"_f{i}" for i in range(k)]
    grid_codes = np.array(list(itertools.product(*(range(len(lv)) for lv in prep.levels))))
    grid = pd.DataFrame(
        {
            c: pd.Categorical([lv[j] for j in grid_codes[:, i]], categories=lv)
            for i, (c, lv) in enumerate(zip(fcols, prep.levels, strict=True))
        }
    )
    rhs = " + ".join(["1"] + [":".join(f"C(_f{i}, Sum)" for i in t) for t in terms])
    grid_dm = patsy.dmatrix(rhs, grid, return_type="dataframe")
    info = grid_dm.design_info
    cell_pd = pd.DataFrame(
        {
            c: pd.Categorical(prep.cells.get_column(c).to_list(), categories=lv)
            for c, lv in zip(fcols, prep.levels, strict=True)
        }
    )
    (cell_X,) = patsy.build_design_matrices([info], cell_pd)
    slices: dict[Term, slice] = {}
    for term, sl in info.term_slices.items():
        idx = tuple(sorted(int(f.code[len("C(_f") :].split(",")[0]) for f in term.factors))
        slices[idx] = sl

    def rename(col: str) -> str:
        return re.sub(r"C\(_f(\d+), Sum\)\[S\.", lambda m: f"{prep.names[int(m.group(1))]}[", col)

    return _Matrices(
        grid_codes,
        np.asarray(grid_dm, dtype=float),
        np.asarray(cell_X, dtype=float),
        slices,
        [rename(c) for c in info.column_names],
    )


def _columns(mats: _Matrices, terms: Sequence[Term]) -> list[int]:
    cols = list(range(mats.slices[()].start, mats.slices[()].stop))
    for t in terms:
        cols += list(range(mats.slices[t].start, mats.slices[t].stop))
    return cols


def _term_sets(terms: Sequence[Term], anova_type: int) -> dict[Term, tuple[list[Term], list[Term]]]:
    """(reduced, full) term lists whose comparison gives each term's SS."""
    out = {}
    for t in terms:
        if anova_type == 2:
            full = [u for u in terms if not (set(t) < set(u))]
        else:
            full = list(terms)
        out[t] = ([u for u in full if u != t], full)
    return out


# ---------------------------------------------------------------------------------------
# linear algebra on aggregated rows


def _wls(X: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    sw = np.sqrt(w)
    b, _, rank, _ = np.linalg.lstsq(X * sw[:, None], y * sw, rcond=None)
    return b, y - X @ b, int(rank)


def _demeaner(
    groups: np.ndarray, w: np.ndarray, n_groups: int
) -> Callable[[np.ndarray], np.ndarray]:
    """Weighted within-group demeaning (absorbs a fixed block exactly, by FWL)."""
    rows = np.arange(len(groups))
    D = sparse.csr_matrix((w, (groups, rows)), shape=(n_groups, len(groups)))
    wsum = np.asarray(D.sum(axis=1)).ravel()

    def apply(M: np.ndarray) -> np.ndarray:
        means = (D @ M) / (wsum[:, None] if M.ndim == 2 else wsum)
        return M - means[groups]

    return apply


def _cluster_sum(scores: np.ndarray, clusters: np.ndarray, n_clusters: int) -> np.ndarray:
    out = np.zeros((n_clusters, scores.shape[1]))
    np.add.at(out, clusters, scores)
    return out


def _sandwich(
    bread: np.ndarray, scores: np.ndarray, clusters: np.ndarray, n_obs: int, rank: int
) -> np.ndarray:
    """Cluster-robust covariance with the usual G/(G-1) (N-1)/(N-K) correction."""
    n_clusters = int(clusters.max()) + 1
    summed = _cluster_sum(scores, clusters, n_clusters)
    meat = summed.T @ summed
    corr = n_clusters / (n_clusters - 1) * (n_obs - 1) / max(n_obs - rank, 1)
    return np.asarray(corr * bread @ meat @ bread)


def _wald(b: np.ndarray, V: np.ndarray, idx: Sequence[int]) -> tuple[float, int]:
    bt = b[list(idx)]
    Vt = V[np.ix_(list(idx), list(idx))]
    rank = int(np.linalg.matrix_rank(Vt)) if len(idx) else 0
    if rank == 0:
        return float("nan"), 0
    return float(bt @ np.linalg.pinv(Vt) @ bt), rank


# ---------------------------------------------------------------------------------------
# model engines: each returns the ANOVA rows and (b, V, df) for effects and means


@dataclass
class _Fit:
    rows: list[dict[str, Any]]
    b: np.ndarray
    V: np.ndarray
    df: float  # for t quantiles (inf: normal)
    residual_ss: float
    total_ss: float
    item_ss: float | None
    info: dict[str, Any]


def _gaussian(
    prep: _Prepared,
    mats: _Matrices,
    terms: list[Term],
    item_mode: ItemMode | None,
    anova_type: int,
) -> _Fit:
    use_groups = prep.groups is not None
    item_idx, n_items = np.zeros(0, dtype=int), 0
    if use_groups:
        assert prep.groups is not None
        g = prep.groups
        cell_idx = g.get_column("_cell").to_numpy()
        X = mats.cell_X[cell_idx]
        y = g.get_column("mean").to_numpy()
        w = g.get_column("n").to_numpy().astype(float)
        within = float(g.get_column("ss").sum())
        item_idx = g.get_column("_item_idx").to_numpy()
        n_items = len(prep.items)
    else:
        X = mats.cell_X
        y = prep.cells.get_column("mean").to_numpy()
        w = prep.cells.get_column("n").to_numpy().astype(float)
        within = float(prep.cells.get_column("ss").sum())
    N = prep.n_obs
    grand = float(np.sum(w * y) / np.sum(w))
    total_ss = within + float(np.sum(w * (y - grand) ** 2))
    absorb = item_mode in ("fixed", "random")

    demean = _demeaner(item_idx, w, n_items) if use_groups else None
    Xd = demean(X) if demean else None
    yd = demean(y) if demean else None
    cache: dict[tuple[tuple[int, ...], bool], tuple[float, int]] = {}

    def rss(cols: list[int], absorbed: bool) -> tuple[float, int]:
        key = (tuple(cols), absorbed)
        if key not in cache:
            if absorbed:
                assert Xd is not None and yd is not None
                _, r, rank = _wls(Xd[:, cols], yd, w)
                rank += n_items
            else:
                _, r, rank = _wls(X[:, cols], y, w)
            cache[key] = (within + float(np.sum(w * r**2)), rank)
        return cache[key]

    all_cols = _columns(mats, terms)
    rss_all, rank_all = rss(all_cols, absorb)
    df_res = N - rank_all
    mse = rss_all / df_res if df_res > 0 else float("nan")

    # coefficients and their covariance for effects / means
    info: dict[str, Any] = {}
    if absorb and item_mode == "fixed":
        assert Xd is not None and yd is not None
        slopes = [c for c in all_cols if c != 0]
        b_s, _, _ = _wls(Xd[:, slopes], yd, w)
        b = np.zeros(X.shape[1])
        b[slopes] = b_s
        alpha = _cluster_sum((w * (y - X @ b))[:, None], item_idx, n_items)[:, 0]
        wsum = _cluster_sum(w[:, None], item_idx, n_items)[:, 0]
        b[0] = float(np.mean(alpha / wsum))
        V = np.zeros((X.shape[1], X.shape[1]))
        Xs = Xd[:, slopes]
        V[np.ix_(slopes, slopes)] = mse * np.linalg.pinv(Xs.T @ (Xs * w[:, None]))
        V[0, 0] = mse / N
        df_t = float(df_res)
    else:
        b, resid, rank = _wls(X, y, w)
        bread = np.linalg.pinv(X.T @ (X * w[:, None]))
        if item_mode == "cluster":
            V = _sandwich(bread, X * (w * resid)[:, None], item_idx, N, rank)
            df_t = float(n_items - 1)
        else:
            V = mse * bread
            df_t = float(df_res)

    mixed = None
    if item_mode == "random":
        mixed = _mixed(prep, mats, all_cols)
        b = np.zeros(X.shape[1])
        V = np.zeros((X.shape[1], X.shape[1]))
        b[all_cols] = mixed["b"]
        V[np.ix_(all_cols, all_cols)] = mixed["V"]
        df_t = math.inf
        info.update(mixed["info"])

    rows = []
    for term, (reduced, full) in _term_sets(terms, anova_type).items():
        cols_f, cols_r = _columns(mats, full), _columns(mats, reduced)
        rss_f, rank_f = rss(cols_f, absorb)
        rss_r, rank_r = rss(cols_r, absorb)
        ss, df = max(rss_r - rss_f, 0.0), rank_f - rank_r
        sl = list(range(mats.slices[term].start, mats.slices[term].stop))
        if item_mode == "cluster":
            b_f, r_f, rk = _wls(X[:, cols_f], y, w)
            Xf = X[:, cols_f]
            Vf = _sandwich(
                np.linalg.pinv(Xf.T @ (Xf * w[:, None])), Xf * (w * r_f)[:, None], item_idx, N, rk
            )
            pos = [cols_f.index(c) for c in sl]
            chi2, dfw = _wald(b_f, Vf, pos)
            F = chi2 / dfw if dfw else float("nan")
            p = float(sps.f.sf(F, dfw, n_items - 1)) if dfw else float("nan")
        elif item_mode == "random":
            chi2, dfw = _wald(b, V, sl)
            F = chi2 / dfw if dfw else float("nan")
            p = float(sps.chi2.sf(chi2, dfw)) if dfw else float("nan")
        else:
            F = (ss / df) / mse if df and mse > 0 else float("nan")
            p = float(sps.f.sf(F, df, df_res)) if df and mse > 0 else float("nan")
        rows.append(_anova_row(_term_name(term, prep.names), ss, df, F, p, rss_all, mse, total_ss))

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
            rows.append(_anova_row("item", item_ss, df_item, F, p, rss_all, mse, total_ss))
    rows.append(
        {
            "term": "Residual",
            "sum_sq": rss_all,
            "df": df_res,
            "F": None,
            "p": None,
            "partial_eta2": None,
            "omega2": None,
        }
    )
    info.update(
        {"df_resid": df_res, "mse": mse, "r2": 1 - rss_all / total_ss if total_ss else None}
    )
    return _Fit(rows, b, V, df_t, rss_all, total_ss, item_ss, info)


def _anova_row(
    term: str, ss: float, df: int, F: float, p: float, rss: float, mse: float, total: float
) -> dict[str, Any]:
    partial = ss / (ss + rss) if ss + rss > 0 else float("nan")
    omega = max((ss - df * mse) / (total + mse), 0.0) if total + mse > 0 else float("nan")
    return {
        "term": term,
        "sum_sq": ss,
        "df": df,
        "F": F,
        "p": p,
        "partial_eta2": partial,
        "omega2": omega,
    }


def _mixed(prep: _Prepared, mats: _Matrices, cols: list[int]) -> dict[str, Any]:
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


def _bernoulli_deviance(s: np.ndarray, n: np.ndarray, mu: np.ndarray) -> float:
    mu = np.clip(mu, 1e-15, 1 - 1e-15)
    return float(-2 * np.sum(xlogy(s, mu) + xlogy(n - s, 1 - mu)))


def _binomial(
    prep: _Prepared,
    mats: _Matrices,
    terms: list[Term],
    item_mode: ItemMode | None,
    anova_type: int,
) -> _Fit:
    import statsmodels.api as sm

    if item_mode == "random":
        raise ValueError(
            "item_mode='random' is a linear mixed model; for 0/1 scores use item_mode='cluster'"
            " (cluster-robust) or 'fixed'"
        )
    use_groups = prep.groups is not None and item_mode in ("fixed", "cluster")
    item_idx, n_items = np.zeros(0, dtype=int), 0
    if use_groups:
        assert prep.groups is not None
        g = prep.groups
        X = mats.cell_X[g.get_column("_cell").to_numpy()]
        n = g.get_column("n").to_numpy().astype(float)
        s = g.get_column("mean").to_numpy() * n
        item_idx = g.get_column("_item_idx").to_numpy()
        n_items = len(prep.items)
    else:
        X = mats.cell_X
        n = prep.cells.get_column("n").to_numpy().astype(float)
        s = prep.cells.get_column("mean").to_numpy() * n
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
            cache[key] = (_bernoulli_deviance(s, n, np.asarray(res.mu)), rank, res)
        return cache[key]

    def cov(res: Any, cols: list[int]) -> np.ndarray:
        if item_mode != "cluster":
            return np.asarray(res.cov_params())
        Xs = X[:, cols]
        mu = np.asarray(res.mu)
        bread = np.linalg.pinv(Xs.T @ (Xs * (n * mu * (1 - mu))[:, None]))
        return _sandwich(
            bread, Xs * (s - n * mu)[:, None], item_idx, N, int(np.linalg.matrix_rank(Xs))
        )

    all_cols = _columns(mats, terms) + item_col_list
    dev_all, rank_all, res_all = fit(all_cols)
    mean_all = float(s.sum() / n.sum())
    null_dev = _bernoulli_deviance(s, n, np.full_like(n, mean_all))
    rows = []
    for term, (reduced, full) in _term_sets(terms, anova_type).items():
        cols_f = _columns(mats, full) + item_col_list
        cols_r = _columns(mats, reduced) + item_col_list
        dev_f, rank_f, res_f = fit(cols_f)
        dev_r, rank_r, _ = fit(cols_r)
        chi2, df = max(dev_r - dev_f, 0.0), rank_f - rank_r
        sl = list(range(mats.slices[term].start, mats.slices[term].stop))
        wald, dfw = _wald(
            np.asarray(res_f.params), cov(res_f, cols_f), [cols_f.index(c) for c in sl]
        )
        wald_p = float(sps.chi2.sf(wald, dfw)) if dfw else float("nan")
        lr_p = float(sps.chi2.sf(chi2, df)) if df else float("nan")
        rows.append(
            {
                "term": _term_name(term, prep.names),
                "sum_sq": chi2,
                "df": df,
                "F": None,
                "p": wald_p if item_mode == "cluster" else lr_p,
                "partial_eta2": None,
                "omega2": None,
                "chi2": chi2,
                "lr_p": lr_p,
                "wald_chi2": wald,
                "wald_p": wald_p,
            }
        )
    item_ss = None
    if item_mode == "fixed":
        dev_noitem, rank_noitem, _ = fit(_columns(mats, terms))
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
            }
        )
    rows.append(
        {
            "term": "Residual",
            "sum_sq": dev_all,
            "df": N - rank_all,
            "F": None,
            "p": None,
            "partial_eta2": None,
            "omega2": None,
        }
    )
    b_full = np.asarray(res_all.params)
    V_full = cov(res_all, all_cols)
    keep = _columns(mats, terms)
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
    return _Fit(rows, b, V, math.inf, dev_all, null_dev, item_ss, info)


# ---------------------------------------------------------------------------------------
# summaries


def _quantile(df: float, level: float) -> float:
    q = 0.5 + level / 2
    return float(sps.norm.ppf(q) if not math.isfinite(df) else sps.t.ppf(q, df))


def _emm_L(mats: _Matrices, term: Term) -> tuple[list[tuple[int, ...]], np.ndarray]:
    keys = [tuple(row) for row in mats.grid_codes[:, list(term)]]
    uniq = sorted(set(keys))
    pos = {k: i for i, k in enumerate(uniq)}
    onehot = np.zeros((len(uniq), len(keys)))
    onehot[[pos[k] for k in keys], np.arange(len(keys))] = 1.0
    L = (onehot @ mats.grid_X) / onehot.sum(axis=1, keepdims=True)
    return uniq, L


def _marginal_means(
    prep: _Prepared, mats: _Matrices, fit: _Fit, terms: list[Term], family: Family, level: float
) -> pl.DataFrame:
    q = _quantile(fit.df, level)
    counts = prep.cells
    records = []
    for term in terms:
        uniq, L = _emm_L(mats, term)
        est = L @ fit.b
        se = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", L, fit.V, L), 0))
        n_by = counts.group_by([f"_f{i}" for i in term]).agg(pl.col("n").sum()).rows()
        n_lookup = {tuple(r[:-1]): r[-1] for r in n_by}
        for key, e, s_ in zip(uniq, est, se, strict=True):
            lv = tuple(prep.levels[i][j] for i, j in zip(term, key, strict=True))
            lo, hi = e - q * s_, e + q * s_
            row = {
                "term": _term_name(term, prep.names),
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


def _effects(mats: _Matrices, fit: _Fit, family: Family, level: float) -> pl.DataFrame:
    q = _quantile(fit.df, level)
    se = np.sqrt(np.maximum(np.diag(fit.V), 0))
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = np.where(se > 0, fit.b / np.where(se > 0, se, 1), np.nan)
    if math.isfinite(fit.df):
        p = 2 * sps.t.sf(np.abs(stat), fit.df)
    else:
        p = 2 * sps.norm.sf(np.abs(stat))
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


def _pairwise(
    prep: _Prepared, mats: _Matrices, fit: _Fit, family: Family, level: float
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
                t = est.estimate / est.se if est.se > 0 else float("nan")
                p = (
                    float(2 * sps.t.sf(abs(t), both.height - 1))
                    if math.isfinite(t)
                    else float("nan")
                )
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
            _, L = _emm_L(mats, (i,))
            q = _quantile(fit.df, level)
            for ia, ib in itertools.combinations(range(len(lv)), 2):
                c = L[ia] - L[ib]
                e = float(c @ fit.b)
                s_ = float(np.sqrt(max(c @ fit.V @ c, 0)))
                stat = e / s_ if s_ > 0 else float("nan")
                dist = sps.t(fit.df) if math.isfinite(fit.df) else sps.norm()
                p = float(2 * dist.sf(abs(stat))) if math.isfinite(stat) else float("nan")
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


def _setup_matrix(prep: _Prepared, m: int, s: int) -> tuple[list[str], list[str], np.ndarray]:
    """Model x setup-level mean scores, averaging cell means over the other factors."""
    tab = prep.cells.group_by([f"_f{m}", f"_f{s}"]).agg(pl.col("mean").mean())
    models, setups = prep.levels[m], prep.levels[s]
    M = np.full((len(models), len(setups)), np.nan)
    for mv, sv, val in tab.rows():
        M[models.index(mv), setups.index(sv)] = val
    return models, setups, M


def _robustness(prep: _Prepared, m: int) -> dict[str, Any]:
    out: dict[str, Any] = {"model_factor": prep.names[m], "setup_factors": {}}
    for s in range(len(prep.names)):
        if s == m or len(prep.levels[s]) < 2:
            continue
        models, setups, M = _setup_matrix(prep, m, s)
        per_model = {}
        for i, mv in enumerate(models):
            row = M[i][np.isfinite(M[i])]
            if row.size == 0:
                continue
            maxp, avgp = float(row.max()), float(row.mean())
            per_model[mv] = {
                "spread": maxp - float(row.min()),
                "max": maxp,
                "avg": avgp,
                "cps": (1 - (maxp - avgp)) * maxp,
            }
        complete = M[:, np.all(np.isfinite(M), axis=0)]
        entry: dict[str, Any] = {
            "per_model": per_model,
            "kendall_w": None,
            "kendall_tau": [],
            "rank_flips": [],
        }
        if len(models) >= 2 and complete.shape[1] >= 2:
            ranks = np.apply_along_axis(sps.rankdata, 0, -complete)
            entry["kendall_w"] = float(kendall_w(ranks.T))
        kept = [sv for j, sv in enumerate(setups) if np.all(np.isfinite(M[:, j]))]
        for (ja, a), (jb, b) in itertools.combinations(enumerate(setups), 2):
            if a in kept and b in kept and len(models) >= 2:
                entry["kendall_tau"].append(
                    {"a": a, "b": b, "tau": float(kendall_tau(M[:, ja], M[:, jb]))}
                )
        for (ia, ma), (ib, mb) in itertools.combinations(enumerate(models), 2):
            diff = M[ia] - M[ib]
            first = [setups[j] for j in range(len(setups)) if diff[j] > 0]
            second = [setups[j] for j in range(len(setups)) if diff[j] < 0]
            if first and second:
                entry["rank_flips"].append(
                    {"models": [ma, mb], "first_ahead_at": first, "second_ahead_at": second}
                )
        entry["n_rank_flips"] = len(entry["rank_flips"])
        out["setup_factors"][prep.names[s]] = entry
    return out


def _pair(prep: _Prepared, m: int, compare: Sequence[str] | None) -> tuple[str, str]:
    means = prep.cells.group_by(f"_f{m}").agg(pl.col("mean").mean()).sort("mean", descending=True)
    if compare is not None:
        a, b = (str(c) for c in compare)
        for v in (a, b):
            if v not in prep.levels[m]:
                raise ValueError(f"{v!r} is not a level of {prep.names[m]!r}")
        return a, b
    top = means.get_column(f"_f{m}").to_list()
    if len(top) < 2:
        raise ValueError("attribution needs two models")
    return top[0], top[1]


def _attribution(
    prep: _Prepared, m: int, pair: tuple[str, str], anova: pl.DataFrame
) -> dict[str, Any]:
    a, b = pair
    overall = prep.cells.group_by(f"_f{m}").agg(pl.col("mean").mean())
    lookup = dict(overall.rows())
    gap = float(lookup[a] - lookup[b])
    out: dict[str, Any] = {"models": [a, b], "gap": gap, "setup_factors": {}}
    ss = dict(zip(anova.get_column("term"), anova.get_column("sum_sq"), strict=True))
    model_name = prep.names[m]
    for s in range(len(prep.names)):
        if s == m or len(prep.levels[s]) < 2:
            continue
        models, setups, M = _setup_matrix(prep, m, s)
        gaps = M[models.index(a)] - M[models.index(b)]
        ok = np.isfinite(gaps)
        g = gaps[ok]
        if g.size == 0:
            continue
        mean = float(g.mean())
        main_part = g.size * mean**2
        inter_part = float(np.sum((g - mean) ** 2))
        inter_term = ":".join(sorted([model_name, prep.names[s]], key=prep.names.index))
        ss_m, ss_i = ss.get(model_name), ss.get(inter_term)
        table_share = (
            ss_i / (ss_m + ss_i)
            if ss_m is not None and ss_i is not None and (ss_m + ss_i) > 0
            else None
        )
        same = int(np.sum(np.sign(g) == np.sign(gap))) if gap != 0 else 0
        pct = 100 * inter_part / max(main_part + inter_part, 1e-300)
        out["setup_factors"][prep.names[s]] = {
            "gap_by_level": {
                sv: float(x) for sv, x in zip(setups, gaps, strict=True) if np.isfinite(x)
            },
            "mean": mean,
            "min": float(g.min()),
            "max": float(g.max()),
            "levels_same_sign": same,
            "n_levels": int(g.size),
            "interaction_share": inter_part / (main_part + inter_part)
            if main_part + inter_part > 0
            else None,
            "interaction_ss_share": table_share,
            "statement": (
                f"{a} - {b} = {gap:.4g} overall; across {prep.names[s]} the gap ranges "
                f"{float(g.min()):.4g} to {float(g.max()):.4g} and keeps its sign at {same} of "
                f"{g.size} levels; {pct:.0f}% of its squared variation is model x setup "
                "interaction"
            ),
        }
    return out


def _power(
    prep: _Prepared, m: int, pair: tuple[str, str], diff: float | None, alpha: float, power: float
) -> dict[str, Any]:
    a, b = pair
    out: dict[str, Any] = {"models": [a, b], "alpha": alpha, "power": power}
    if "_item" not in prep.work.columns:
        return {**out, "items_needed": None, "note": "needs an item column to pair"}
    wide = (
        prep.work.filter(pl.col(f"_f{m}").is_in([a, b]))
        .group_by(["_item", f"_f{m}"])
        .agg(pl.col("_y").mean())
        .pivot(on=f"_f{m}", index="_item", values="_y")
        .drop_nulls()
    )
    if wide.height < 2 or a not in wide.columns or b not in wide.columns:
        return {**out, "items_needed": None, "note": "fewer than two items with both models"}
    d = wide.get_column(a).to_numpy() - wide.get_column(b).to_numpy()
    sd = float(np.std(d, ddof=1))
    observed = float(d.mean())
    target = abs(diff if diff is not None else observed)
    needed = items_needed(target, sd, alpha=alpha, power=power) if target > 0 and sd > 0 else None
    return {
        **out,
        "observed_diff": observed,
        "sd_diff": sd,
        "n_items": wide.height,
        "target_diff": target,
        "items_needed": needed,
    }


# ---------------------------------------------------------------------------------------
# entry points


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
    prep = _prepare(df, response, factors, item, family)
    term_list = _terms(len(factors), order, factors, terms)
    mats = _matrices(prep, term_list)
    engine = _gaussian if family == "gaussian" else _binomial
    fit = engine(prep, mats, term_list, item_mode, anova_type)
    anova = pl.DataFrame(fit.rows, infer_schema_length=None)

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

    emm = _marginal_means(prep, mats, fit, term_list, family, level)
    pairwise = _pairwise(prep, mats, fit, family, level)
    effects = _effects(mats, fit, family, level)

    mf = model_factor if model_factor is not None else ("model" if "model" in factors else None)
    robustness: dict[str, Any] = {}
    attribution: dict[str, Any] = {}
    power_out: dict[str, Any] = {}
    if mf is not None:
        if mf not in factors:
            raise ValueError(f"model_factor {mf!r} is not among the factors")
        m = factors.index(mf)
        robustness = _robustness(prep, m)
        if len(prep.levels[m]) >= 2:
            pair = _pair(prep, m, compare)
            attribution = _attribution(prep, m, pair, anova)
            power_out = _power(prep, m, pair, power_diff, alpha, power)

    model = {
        "family": family,
        "link": "logit" if family == "binomial" else "identity",
        "formula": _display_formula(response, term_list, factors),
        "terms": [_term_name(t, factors) for t in term_list],
        "anova_type": anova_type,
        "item": item,
        "item_mode": item_mode,
        "n_obs": prep.n_obs,
        "n_cells": prep.cells.height,
        "n_items": len(prep.items) if item else None,
        "n_dropped": df.height - prep.n_obs,
        "level": level,
        "levels": {n: lv for n, lv in zip(factors, prep.levels, strict=True)},
        **fit.info,
    }
    return AnalysisResult(
        anova=anova,
        variance_shares=pl.DataFrame(shares),
        marginal_means=emm,
        pairwise=pairwise,
        effects=effects,
        robustness=robustness,
        attribution=attribution,
        power=power_out,
        model=model,
    )


def analyze_csv(
    path: str | Path, response: str, factors: list[str], item: str | None = None, **kw: Any
) -> AnalysisResult:
    """``analyze`` on a CSV read with polars; a missing column is named in the error."""
    df = pl.read_csv(path, infer_schema_length=10_000)
    return analyze(df, response, factors, item=item, **kw)
