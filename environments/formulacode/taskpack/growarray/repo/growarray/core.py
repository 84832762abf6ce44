import numpy as np


def running_totals(values):
    """Running sum of values as a float array."""
    out = np.array([], dtype=float)
    total = 0.0
    for v in values:
        total += v
        out = np.append(out, total)
    return out


def collect_positive(values):
    """The positive values, in order, as a float array."""
    out = np.empty(0)
    for v in values:
        if v > 0:
            out = np.concatenate([out, [v]])
    return out
