import numpy as np


def linear_interp(xp, fp, x):
    """Piecewise-linear interpolation of (xp, fp) at x; clamps outside the range."""
    return np.interp(np.asarray(x, dtype=float), np.asarray(xp, dtype=float),
                     np.asarray(fp, dtype=float))


def resample(t, y, n):
    """y(t) resampled on n evenly spaced points."""
    grid = np.linspace(t[0], t[-1], n)
    return linear_interp(t, y, grid)
