import numpy as np


def running_totals(values):
    """Running sum of values as a float array."""
    out = []
    total = 0.0
    for v in values:
        total += v
        out.append(total)
    return np.array(out, dtype=float)


def collect_positive(values):
    """The positive values, in order, as a float array."""
    return np.array([v for v in values if v > 0], dtype=float)
