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
    """A fixed 1-D sample answering quantile and rank queries.

    From the second quantile query on, a sorted copy of the sample is built once and reused: each
    later quantile is an O(1) interpolation and each rank an O(log n) binary search,
    instead of an O(n) selection or scan per query.
    """

    def __init__(self, values):
        self.values = np.asarray(values, dtype=np.float64)
        self._sorted = None
        self._queries = 0

    def _order(self):
        self._queries += 1
        if self._sorted is None and self._queries >= 2:
            self._sorted = np.sort(self.values)
        return self._sorted

    def quantile(self, q):
        """Linear-interpolated quantile(s) ``q`` in [0, 1] (numpy's default method)."""
        s = self._order()
        if s is None:
            s = np.partition(self.values, _positions(len(self.values), q))
        return _interp(s, q)

    def fraction_below(self, x):
        """Share of the sample strictly below ``x``."""
        s = self._sorted  # a rank query alone is cheaper as a scan than a sort
        if s is None:
            return float(np.count_nonzero(self.values < x)) / len(self.values)
        return float(np.searchsorted(s, x, side="left")) / len(self.values)
