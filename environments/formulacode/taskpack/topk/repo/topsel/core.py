"""Largest-k selection."""

import numpy as np


def top_k(x, k):
    """The ``k`` largest values of ``x``, in descending order."""
    x = np.asarray(x)
    return np.sort(x)[::-1][:k].copy()


def top_k_rows(M, k):
    """The ``k`` largest values of every row of ``M``, each row descending."""
    M = np.asarray(M)
    return np.sort(M, axis=1)[:, ::-1][:, :k].copy()
