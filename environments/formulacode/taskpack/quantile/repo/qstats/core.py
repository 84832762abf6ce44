"""Quantile queries over a fixed sample."""

import numpy as np


def _interp(s, q):
    """numpy's default (linear) quantile from ``s``, whose order statistics at the needed
    positions are in place (sorted or partitioned there)."""
    pos = np.asarray(q, dtype=np.float64) * (len(s) - 1)
    lo = np.floor(pos).astype(np.intp)
    hi = np.minimum(lo + 1, len(s) - 1)
    out = s[lo] + (s[hi] - s[lo]) * (pos - lo)
    return out if out.ndim else np.float64(out)


def _positions(n, q):
    pos = np.asarray(q, dtype=np.float64).ravel() * (n - 1)
    lo = np.floor(pos).astype(np.intp)
    return np.unique(np.concatenate([lo, np.minimum(lo + 1, n - 1)]))


class Sample:
    """A fixed 1-D sample answering quantile and rank queries."""

    def __init__(self, values):
        self.values = np.asarray(values, dtype=np.float64)

    def quantile(self, q):
        """Linear-interpolated quantile(s) ``q`` in [0, 1] (numpy's default method)."""
        part = np.partition(self.values, _positions(len(self.values), q))
        return _interp(part, q)

    def fraction_below(self, x):
        """Share of the sample strictly below ``x``."""
        return float(np.count_nonzero(self.values < x)) / len(self.values)
