"""Sliding-window extrema over 1-D arrays."""

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def _running(x, w, ufunc):
    x = np.asarray(x, dtype=np.float64)
    if not 1 <= w <= len(x):
        raise ValueError("window must be between 1 and len(x)")
    return ufunc.reduce(sliding_window_view(x, w), axis=1)


def running_max(x, w):
    """out[i] = max(x[i:i+w]) for i in 0..len(x)-w."""
    return _running(x, w, np.maximum)


def running_min(x, w):
    """out[i] = min(x[i:i+w]) for i in 0..len(x)-w."""
    return _running(x, w, np.minimum)
