"""DLinear and KUP-BI (our small reading): a linear forecaster with and without a retrieved
post-target continuation proxy from a train-only library.

KUP-BI (Liu et al., arXiv:2605.19249, "Knowledge Utilization Paradigm with Bidirectional
Inspiration") gives a forecasting backbone an approximate proxy of the *post-target
continuation* of the current input, distilled from a library of training trajectories
``history -> target -> continuation``, fused with the input stream by a feature-level gate.
Ours, in numpy:

* ``dlinear`` (the backbone and baseline): DLinear's series decomposition (moving-average
  trend + seasonal remainder of the look-back window) and one linear map of each to the
  horizon, fitted as one ridge regression; the ridge is chosen on the validation windows,
  then the model is refitted on all past windows;
* ``kup-bi``: the library holds every window of the *training* part (before validation):
  its history and its target + continuation. A query's ``k`` nearest library histories (in
  z-normalised Euclidean distance; library windows that overlap the query are excluded)
  give the proxy: their target + continuation segments, each z-normalised by its own
  history and re-scaled to the query's, averaged with softmax(-distance) weights. The
  proxy enters DLinear's ridge as extra features (the linear gate: the fit weighs each
  stream per horizon step). The paper rescales retrieved continuations by a ratio per
  channel and fuses through a gating module; no deep backbone, no learned retriever here.

Inputs: ``past`` (the series before the cut), ``val_start``, ``test_histories`` (rows of
``lookback`` values), ``lookback``, ``horizon``, ``continuation``. Config: ``k``,
``kernel``. Outputs: ``forecast`` (rows of ``horizon`` values).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from harness.plugins.plain_method import plain_method

FAMILY = "long_term_forecasting"
RIDGES = (1e-2, 1e-1, 1.0, 10.0, 100.0)
Array = NDArray[np.float64]
IntArray = NDArray[np.int64]


def decompose(histories: Array, kernel: int) -> tuple[Array, Array]:
    """DLinear's decomposition: a centred moving average (edges padded by repetition) and
    the remainder."""
    kernel = max(1, min(kernel, histories.shape[1]))
    left, right = (kernel - 1) // 2, kernel // 2
    padded = np.concatenate([np.repeat(histories[:, :1], left, axis=1), histories,
                             np.repeat(histories[:, -1:], right, axis=1)], axis=1)
    csum = np.concatenate([np.zeros((len(histories), 1)), np.cumsum(padded, axis=1)], axis=1)
    trend = (csum[:, kernel:] - csum[:, :-kernel]) / kernel
    return trend, histories - trend


def ridge_fit(f: Array, y: Array, ridge: float) -> Array:
    design = np.column_stack([f, np.ones(len(f))])
    penalty = ridge * np.eye(design.shape[1])
    penalty[-1, -1] = 0.0
    return np.asarray(np.linalg.solve(design.T @ design + penalty, design.T @ y), dtype=float)


def ridge_predict(f: Array, w: Array) -> Array:
    return np.column_stack([f, np.ones(len(f))]) @ w


def _rows(series: Array, starts: IntArray, offset: int, length: int) -> Array:
    return series[starts[:, None] + np.arange(offset, offset + length)[None, :]]


def _znorm(h: Array) -> tuple[Array, Array, Array]:
    mean = h.mean(axis=1, keepdims=True)
    sd = np.maximum(h.std(axis=1, keepdims=True), 1e-6)
    return (h - mean) / sd, mean, sd


class Library:
    """Train-only windows: start ``s``, history ``[s - L, s)``, future ``[s, s + H + C)``."""

    def __init__(self, series: Array, end: int, lookback: int, future: int) -> None:
        self.starts = np.arange(lookback, end - future + 1, dtype=np.int64)
        self.lookback = lookback
        hist = _rows(series, self.starts, -lookback, lookback)
        self.keys, mean, sd = _znorm(hist)
        self.futures = (_rows(series, self.starts, 0, future) - mean) / sd
        self.span = lookback + future

    def proxy(self, histories: Array, query_starts: IntArray | None, k: int) -> Array:
        """The softmax(-distance)-weighted mean of the k nearest futures, on each query's
        scale; library windows overlapping a query (start within ``span``) are skipped."""
        q, mean, sd = _znorm(histories)
        dist = np.sqrt(np.maximum((q**2).sum(1)[:, None] - 2 * q @ self.keys.T
                                  + (self.keys**2).sum(1)[None, :], 0.0) / self.lookback)
        if query_starts is not None:
            dist[np.abs(query_starts[:, None] - self.starts[None, :]) < self.span] = np.inf
        k = max(1, min(k, len(self.starts) - 1))
        near = np.argpartition(dist, k - 1, axis=1)[:, :k]
        d = np.take_along_axis(dist, near, axis=1)
        finite = np.isfinite(d)
        low = np.where(finite, d, np.inf).min(axis=1, keepdims=True)
        low[~np.isfinite(low)] = 0.0
        # a query with no admissible neighbour gets a zero proxy (its own history's mean)
        w = np.where(finite, np.exp(-(np.where(finite, d, 0.0) - low)), 0.0)
        w /= np.maximum(w.sum(axis=1, keepdims=True), 1e-12)
        futures = np.einsum("nk,nkj->nj", w, self.futures[near])
        return futures * sd + mean


def _setup(inputs: Mapping[str, Any]) -> tuple[Array, int, int, int, int, Array]:
    past = np.asarray(inputs["past"], dtype=float)
    return (past, int(inputs["val_start"]), int(inputs["lookback"]), int(inputs["horizon"]),
            int(inputs["continuation"]), np.asarray(inputs["test_histories"], dtype=float))


def _fit_and_forecast(inputs: Mapping[str, Any], config: Mapping[str, Any],
                      extra: Any = None) -> dict[str, Any]:
    """Choose the ridge on validation windows, refit on all past windows, forecast.
    ``extra(histories, starts)`` adds features (``starts`` None for test queries)."""
    past, val_start, lookback, horizon, _, test_hist = _setup(inputs)
    kernel = int(config.get("kernel", 25))

    def features(hist: Array, starts: IntArray | None) -> Array:
        trend, seasonal = decompose(hist, kernel)
        parts = [trend, seasonal] + ([extra(hist, starts)] if extra is not None else [])
        return np.hstack(parts)

    fit_starts = np.arange(lookback, val_start - horizon + 1, dtype=np.int64)
    val_starts = np.arange(val_start, len(past) - horizon + 1, dtype=np.int64)
    if len(val_starts) == 0:  # validation shorter than the horizon: hold out the last fifth
        held = max(len(fit_starts) // 5, 1)
        val_starts = fit_starts[-held:]
        fit_starts = fit_starts[:max(len(fit_starts) - held - horizon, 1)]
    all_starts = np.arange(lookback, len(past) - horizon + 1, dtype=np.int64)
    f_fit = features(_rows(past, fit_starts, -lookback, lookback), fit_starts)
    y_fit = _rows(past, fit_starts, 0, horizon)
    f_val = features(_rows(past, val_starts, -lookback, lookback), val_starts)
    y_val = _rows(past, val_starts, 0, horizon)
    errors = [float(np.mean((ridge_predict(f_val, ridge_fit(f_fit, y_fit, r)) - y_val) ** 2))
              for r in RIDGES]
    ridge = RIDGES[int(np.argmin(errors))]
    f_all = features(_rows(past, all_starts, -lookback, lookback), all_starts)
    w = ridge_fit(f_all, _rows(past, all_starts, 0, horizon), ridge)
    forecast = ridge_predict(features(test_hist, None), w)
    return {"forecast": forecast, "ridge": ridge, "val_mse": min(errors)}


@plain_method("dlinear", family=FAMILY, role="baseline")
def dlinear(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """DLinear: linear maps of the trend and seasonal parts of the look-back window."""
    return _fit_and_forecast(inputs, config)


@plain_method("kup-bi", family=FAMILY)
def kup_bi(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """DLinear + a retrieved post-target continuation proxy from a train-only library."""
    past, val_start, lookback, horizon, continuation, _ = _setup(inputs)
    library = Library(past, val_start, lookback, horizon + continuation)
    k = int(config.get("k", 10))
    out = _fit_and_forecast(inputs, config,
                            extra=lambda hist, starts: library.proxy(hist, starts, k))
    return {**out, "library": len(library.starts)}
