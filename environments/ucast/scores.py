"""Scores of an ensemble forecast ``(M, ...)`` against the truth ``(...)``.

* fair (unbiased) CRPS per point: ``mean_m |x_m - y| - sum_{m, m'} |x_m - x_m'| /
  (2 M (M - 1))``, the CRPS an infinite ensemble with the members' distribution would
  get in expectation (Ferro 2014; the ensemble CRPS of weather forecasting's scorecards);
* RMSE of the ensemble mean, the ensemble spread ``sqrt(mean var_m)`` (unbiased
  variance) and the spread-skill ratio ``sqrt((M + 1) / M) spread / RMSE``: 1 for a
  calibrated ensemble of M members (below 1 under-dispersed).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]


def fair_crps(ensemble: Array, truth: Array) -> Array:
    """Fair CRPS per point (the shape of ``truth``), from sorted members in O(M log M):
    ``sum_{m,m'} |x_m - x_m'| = 2 sum_i (2 i - M + 1) x_(i)`` for sorted ``x_(i)``."""
    x = np.asarray(ensemble, dtype=float)
    m = x.shape[0]
    if m < 2:
        raise ValueError("the fair CRPS needs at least two members")
    skill = np.abs(x - truth[None]).mean(axis=0)
    ordered = np.sort(x, axis=0)
    weights = (2 * np.arange(m) - m + 1).reshape((m,) + (1,) * (x.ndim - 1))
    pair_sum = 2.0 * (weights * ordered).sum(axis=0)
    return np.asarray(skill - pair_sum / (2.0 * m * (m - 1)), dtype=float)


def ensemble_scores(ensemble: Array, truth: Array) -> dict[str, float]:
    """Fair CRPS, ensemble-mean RMSE, spread and spread-skill ratio, averaged over all
    points of ``truth``."""
    x = np.asarray(ensemble, dtype=float)
    m = x.shape[0]
    rmse = float(np.sqrt(np.mean((x.mean(axis=0) - truth) ** 2)))
    spread = float(np.sqrt(np.mean(x.var(axis=0, ddof=1))))
    ssr = float(np.sqrt((m + 1) / m) * spread / rmse) if rmse > 0 else float("nan")
    return {"crps": float(np.mean(fair_crps(x, truth))), "rmse": rmse, "spread": spread,
            "ssr": ssr}
