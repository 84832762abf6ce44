import bisect

import numpy as np


def linear_interp(xp, fp, x):
    """Piecewise-linear interpolation of (xp, fp) at x; clamps outside the range."""
    xp = list(map(float, xp))
    fp = list(map(float, fp))
    out = []
    for q in np.asarray(x, dtype=float):
        if q <= xp[0]:
            out.append(fp[0])
            continue
        if q >= xp[-1]:
            out.append(fp[-1])
            continue
        j = bisect.bisect_right(xp, q)
        t = (q - xp[j - 1]) / (xp[j] - xp[j - 1])
        out.append(fp[j - 1] + t * (fp[j] - fp[j - 1]))
    return np.array(out)


def resample(t, y, n):
    """y(t) resampled on n evenly spaced points."""
    grid = np.linspace(t[0], t[-1], n)
    return linear_interp(t, y, grid)
