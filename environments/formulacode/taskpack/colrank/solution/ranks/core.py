"""Column-wise rank transforms."""

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

_POOL = None
_MIN_ROWS = 10_000  # shorter columns sort faster than a pool hand-off takes


def _workers():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _pool():
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=_workers())
    return _POOL


def _rank_one(X, out, j):
    order = np.argsort(X[:, j], kind="stable")
    out[order, j] = np.arange(len(order), dtype=np.float64)


def _rank_many(X, out, cols):
    for j in cols:
        _rank_one(X, out, j)


def rank_columns(X):
    """0-based rank of every value within its column (ties broken by row order)."""
    X = np.asarray(X)
    out = np.empty(X.shape, dtype=np.float64)
    m = X.shape[1]
    workers = min(_workers(), m)
    if workers < 2 or X.shape[0] < _MIN_ROWS:
        _rank_many(X, out, range(m))
        return out
    # numpy's sorts release the GIL: columns are ranked on all CPUs at once
    futures = [_pool().submit(_rank_many, X, out, range(w, m, workers)) for w in range(workers)]
    for f in futures:
        f.result()
    return out


def spearman(X):
    """Spearman correlation matrix of the columns of ``X`` (ordinal ranks)."""
    R = rank_columns(X)
    R -= R.mean(axis=0)
    R /= np.sqrt((R * R).sum(axis=0))
    return R.T @ R
