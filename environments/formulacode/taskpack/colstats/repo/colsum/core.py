"""Per-column summary statistics of a 2-D table."""

import numpy as np


def describe(X, ddof=0):
    """dict of per-column ``mean``, ``std`` (with ``ddof``), ``min``, ``max`` and ``l2``."""
    X = np.asarray(X, dtype=np.float64)
    m = X.shape[1]
    out = {k: np.empty(m) for k in ("mean", "std", "min", "max", "l2")}
    for j in range(m):
        col = X[:, j]
        out["mean"][j] = col.mean()
        out["std"][j] = col.std(ddof=ddof)
        out["min"][j] = col.min()
        out["max"][j] = col.max()
        out["l2"][j] = np.sqrt(np.dot(col, col))
    return out
