"""The truncated policy-gradient (TPG) estimator and the difference in means it improves on.

Johari, Peng and Xing, "Estimation of Treatment Effects Under Nonstationarity via the
Truncated Policy Gradient Estimator" (arXiv:2506.05308). In a Bernoulli(p)-randomised
experiment over time, ``TPG(k)`` replaces each period's outcome by the outcome trajectory
of the next ``k`` periods and weights it by the centred treatment indicator::

    TPG(k) = (1/T) sum_t w_t (y_t + ... + y_{t+k}),   w_t = (a_t - p) / (p (1 - p))

a truncation of the first-order (policy-gradient) approximation of the GATE; ``k = 0`` is
the Horvitz-Thompson difference. Its standard error here is a lag-``k`` truncated
(rectangular-kernel) autocovariance sum of the summands, which only a window of ``k``
periods couples, computed from the one trajectory; where that sum is negative the
Bartlett-weighted sum is used. This is our reading of the paper's variance estimator, not
its code. The estimators are the methods under test, so their own standard errors live
here; intervals for the benchmark's scores come from ``harness.stats``.

Inputs: ``y`` (outcomes), ``a`` (0/1 treatments), ``p``. Config: ``k`` (TPG only).
Outputs: ``estimate``, ``se``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.plugins.plain_method import plain_method

FAMILY = "markov_ab"


def tpg_summands(y: np.ndarray, a: np.ndarray, p: float, k: int) -> np.ndarray:
    """``w_t * (y_t + ... + y_{t+k})`` per period (windows truncated at the horizon)."""
    w = (a - p) / (p * (1.0 - p))
    csum = np.concatenate([[0.0], np.cumsum(y)])
    t = np.arange(len(y))
    end = np.minimum(t + k + 1, len(y))
    return w * (csum[end] - csum[t])


def lagged_variance(x: np.ndarray, lags: int) -> float:
    """Variance of ``mean(x)`` from autocovariances up to ``lags`` (rectangular kernel,
    Bartlett where that is negative)."""
    n = len(x)
    d = x - x.mean()
    gammas = [float(d @ d) / n] + [float(d[:-h] @ d[h:]) / n for h in range(1, lags + 1)
                                   if h < n]
    flat = gammas[0] + 2.0 * sum(gammas[1:])
    if flat <= 0:
        flat = gammas[0] + 2.0 * sum((1 - h / (lags + 1)) * g
                                     for h, g in enumerate(gammas[1:], start=1))
    return max(flat, 0.0) / n


@plain_method("tpg", family=FAMILY)
def tpg(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int) -> dict[str, float]:
    """TPG(k): outcome trajectories of k periods, weighted by the centred treatment."""
    y = np.asarray(inputs["y"], dtype=float)
    a = np.asarray(inputs["a"], dtype=float)
    p, k = float(inputs["p"]), int(config.get("k", 10))
    xi = tpg_summands(y, a, p, k)
    return {"estimate": float(xi.mean()), "se": float(np.sqrt(lagged_variance(xi, k))),
            "k": float(k)}


@plain_method("dim", family=FAMILY, role="baseline")
def difference_in_means(inputs: Mapping[str, Any], config: Mapping[str, Any],
                        seed: int) -> dict[str, float]:
    """Difference in means of treated and control periods, with the i.i.d. (Neyman) SE."""
    y = np.asarray(inputs["y"], dtype=float)
    a = np.asarray(inputs["a"]).astype(bool)
    y1, y0 = y[a], y[~a]
    se = np.sqrt(y1.var(ddof=1) / len(y1) + y0.var(ddof=1) / len(y0))
    return {"estimate": float(y1.mean() - y0.mean()), "se": float(se)}
