"""Column standardisation of feature matrices."""

import numpy as np


def standardize(X, eps=1e-12):
    """(X - column mean) / column std, as a new float64 matrix."""
    X = np.asarray(X, dtype=np.float64)
    centered = X - X.mean(axis=0)
    std = np.sqrt((centered ** 2).mean(axis=0))
    return centered / np.maximum(std, eps)
