"""Largest-k selection."""

import numpy as np


def top_k(x, k):
    """The ``k`` largest values of ``x``, in descending order."""
    x = np.asarray(x)
    n = len(x)
    k = min(k, n)
    if k <= 0:
        return x[:0].copy()
    # O(n) selection of the k largest, then sort only those
    part = np.partition(x, n - k)[n - k:]
    return np.sort(part)[::-1].copy()


def top_k_rows(M, k):
    """The ``k`` largest values of every row of ``M``, each row descending."""
    M = np.asarray(M)
    n = M.shape[1]
    k = min(k, n)
    if k <= 0:
        return M[:, :0].copy()
    part = np.partition(M, n - k, axis=1)[:, n - k:]
    return np.sort(part, axis=1)[:, ::-1].copy()
