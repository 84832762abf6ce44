import numpy as np


def rolling_mean(x, window):
    """Mean of each full window of ``window`` consecutive samples."""
    x = np.asarray(x, dtype=float)
    csum = np.concatenate(([0.0], np.cumsum(x)))
    return (csum[window:] - csum[:-window]) / window


def detrend(x, window):
    """Signal minus its rolling mean (aligned to the window's end)."""
    x = np.asarray(x, dtype=float)
    return x[window - 1:] - rolling_mean(x, window)
