"""Rolling-window features of 1-D series."""

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def _check(x, w):
    x = np.asarray(x, dtype=np.float64)
    if not 1 <= w <= len(x):
        raise ValueError("window must be between 1 and len(x)")
    return x


def rolling_mean(x, w):
    """Mean of every length-``w`` window."""
    x = _check(x, w)
    # reduce over a strided view: no (n - w + 1, w) copy
    return np.add.reduce(sliding_window_view(x, w), axis=1) / w


def rolling_std(x, w):
    """Population standard deviation of every length-``w`` window."""
    x = _check(x, w)
    view = sliding_window_view(x, w)
    mean = np.add.reduce(view, axis=1) / w
    acc = np.zeros_like(mean)
    for k in range(w):  # one column of the view at a time: O(n) extra memory
        d = view[:, k] - mean
        d *= d
        acc += d
    return np.sqrt(acc / w)
