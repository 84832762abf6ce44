"""Per-column summary statistics of a 2-D table."""

import numpy as np


def describe(X, ddof=0):
    """dict of per-column ``mean``, ``std`` (with ``ddof``), ``min``, ``max`` and ``l2``."""
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    # one transposed copy makes every column contiguous; then each statistic is a single
    # row-wise reduction instead of one strided pass per column
    T = np.ascontiguousarray(X.T)
    mean = T.mean(axis=1)
    centered = T - mean[:, None]
    sq = (centered * centered).sum(axis=1)
    return {
        "mean": mean,
        "std": np.sqrt(sq / (n - ddof)),
        "min": T.min(axis=1),
        "max": T.max(axis=1),
        "l2": np.sqrt((T * T).sum(axis=1)),
    }
