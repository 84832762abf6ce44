"""Sliding-window extrema over 1-D arrays."""

import numpy as np


def _running(x, w, ufunc):
    """van Herk / Gil-Werman: O(n) whatever the window, from prefix extrema within blocks of
    ``w`` and suffix extrema within the same blocks."""
    x = np.asarray(x, dtype=np.float64)
    n = len(x)
    if not 1 <= w <= n:
        raise ValueError("window must be between 1 and len(x)")
    if w == 1:
        return x.copy()
    blocks = -(-n // w)
    pad = blocks * w - n
    fill = -np.inf if ufunc is np.maximum else np.inf
    xp = np.concatenate([x, np.full(pad, fill)]).reshape(blocks, w)
    prefix = ufunc.accumulate(xp, axis=1).ravel()
    suffix = ufunc.accumulate(xp[:, ::-1], axis=1)[:, ::-1].ravel()
    m = n - w + 1
    return ufunc(suffix[:m], prefix[w - 1:w - 1 + m])


def running_max(x, w):
    """out[i] = max(x[i:i+w]) for i in 0..len(x)-w."""
    return _running(x, w, np.maximum)


def running_min(x, w):
    """out[i] = min(x[i:i+w]) for i in 0..len(x)-w."""
    return _running(x, w, np.minimum)
