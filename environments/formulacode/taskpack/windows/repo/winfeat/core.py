"""Rolling-window features of 1-D series."""

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def _windows(x, w):
    x = np.asarray(x, dtype=np.float64)
    if not 1 <= w <= len(x):
        raise ValueError("window must be between 1 and len(x)")
    return np.array(sliding_window_view(x, w))  # (n - w + 1, w) copy


def rolling_mean(x, w):
    """Mean of every length-``w`` window."""
    return _windows(x, w).mean(axis=1)


def rolling_std(x, w):
    """Population standard deviation of every length-``w`` window."""
    return _windows(x, w).std(axis=1)
