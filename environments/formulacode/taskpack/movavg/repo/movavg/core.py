import numpy as np


def rolling_mean(x, window):
    """Mean of each full window of ``window`` consecutive samples."""
    x = np.asarray(x, dtype=float)
    n = x.shape[0] - window + 1
    out = np.empty(n)
    for i in range(n):
        total = 0.0
        for v in x[i:i + window]:
            total += v
        out[i] = total / window
    return out


def detrend(x, window):
    """Signal minus its rolling mean (aligned to the window's end)."""
    x = np.asarray(x, dtype=float)
    return x[window - 1:] - rolling_mean(x, window)
