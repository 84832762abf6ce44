"""Column-wise rank transforms."""

import numpy as np


def _rank_one(X, out, j):
    order = np.argsort(X[:, j], kind="stable")
    out[order, j] = np.arange(len(order), dtype=np.float64)


def rank_columns(X):
    """0-based rank of every value within its column (ties broken by row order)."""
    X = np.asarray(X)
    out = np.empty(X.shape, dtype=np.float64)
    for j in range(X.shape[1]):
        _rank_one(X, out, j)
    return out


def spearman(X):
    """Spearman correlation matrix of the columns of ``X`` (ordinal ranks)."""
    R = rank_columns(X)
    R -= R.mean(axis=0)
    R /= np.sqrt((R * R).sum(axis=0))
    return R.T @ R
