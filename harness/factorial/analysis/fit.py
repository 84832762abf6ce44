"""What every model engine consumes (``Problem``, ``Rows``) and returns (``Fit``).

Why a shared module: the Gaussian and binomial engines read the same aggregated rows and
hand back the same ANOVA rows and coefficient summary, so ``analyze`` can treat them alike.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.factorial.analysis.matrices import Matrices
from harness.factorial.analysis.prepare import ItemMode, Prepared, Term


@dataclass(frozen=True)
class Problem:
    """One model to fit: the prepared data, its design matrices, the terms and options."""

    prep: Prepared
    mats: Matrices
    terms: list[Term]
    item_mode: ItemMode | None
    anova_type: int


@dataclass(frozen=True)
class Rows:
    """The rows an engine regresses on: one per cell, or one per cell x item group."""

    X: np.ndarray  # design row of each aggregated row
    n: np.ndarray  # observations behind each row (float)
    mean: np.ndarray  # mean response of each row
    within_ss: float  # sum of squares inside the rows (lost by aggregating)
    item_idx: np.ndarray  # item index of each row (empty when not by item)
    n_items: int


def aggregated_rows(prob: Problem, by_item: bool) -> Rows:
    """Per-cell rows, or per cell x item rows when ``by_item`` (needs an item column)."""
    prep, mats = prob.prep, prob.mats
    if by_item:
        assert prep.groups is not None
        g = prep.groups
        return Rows(
            X=mats.cell_X[g.get_column("_cell").to_numpy()],
            n=g.get_column("n").to_numpy().astype(float),
            mean=g.get_column("mean").to_numpy(),
            within_ss=float(g.get_column("ss").sum()),
            item_idx=g.get_column("_item_idx").to_numpy(),
            n_items=len(prep.items),
        )
    return Rows(
        X=mats.cell_X,
        n=prep.cells.get_column("n").to_numpy().astype(float),
        mean=prep.cells.get_column("mean").to_numpy(),
        within_ss=float(prep.cells.get_column("ss").sum()),
        item_idx=np.zeros(0, dtype=int),
        n_items=0,
    )


@dataclass
class Fit:
    """An engine's answer: ANOVA rows, and (b, V, df) for effects and marginal means."""

    rows: list[dict[str, Any]]
    b: np.ndarray
    V: np.ndarray
    df: float  # for t quantiles (inf: normal)
    residual_ss: float
    total_ss: float
    item_ss: float | None
    info: dict[str, Any]
    no_se: tuple[int, ...] = ()
    """Coefficients whose standard error cannot be estimated (cluster-level ones the
    clusters absorb): their se, interval and test are reported as undefined."""


def anova_row(
    term: str, ss: float, df: int, F: float, p: float, rss: float, mse: float, total: float,
    n_obs: int | None = None,
) -> dict[str, Any]:
    """One ANOVA row with its effect sizes, each named for what it is.

    ``eta2`` = SS / SS_total and ``omega2`` = (SS - df MSE) / (SS_total + MSE) are the
    non-partial ones (shares of all the variance); ``partial_eta2`` = SS / (SS + SS_resid)
    and ``partial_omega2`` = (SS - df MSE) / (SS + (N - df) MSE) the partial ones (the
    term against the residual only; Olejnik & Algina 2003). Omega^2 is floored at 0.
    """
    partial = ss / (ss + rss) if ss + rss > 0 else float("nan")
    eta = ss / total if total > 0 else float("nan")
    omega = max((ss - df * mse) / (total + mse), 0.0) if total + mse > 0 else float("nan")
    partial_omega = float("nan")
    if n_obs is not None and math.isfinite(mse):
        denom = ss + (n_obs - df) * mse
        partial_omega = max((ss - df * mse) / denom, 0.0) if denom > 0 else float("nan")
    return {
        "term": term,
        "sum_sq": ss,
        "df": df,
        "F": F,
        "p": p,
        "partial_eta2": partial,
        "omega2": omega,
        "eta2": eta,
        "partial_omega2": partial_omega,
    }


def residual_row(ss: float, df: int) -> dict[str, Any]:
    """The ``Residual`` row (no test statistics)."""
    return {
        "term": "Residual",
        "sum_sq": ss,
        "df": df,
        "F": None,
        "p": None,
        "partial_eta2": None,
        "omega2": None,
    }
