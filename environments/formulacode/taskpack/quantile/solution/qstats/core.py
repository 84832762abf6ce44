"""Quantile queries over a fixed sample."""

from bisect import bisect_left

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

    One working copy of the sample is partitioned in place and kept between queries, with
    the positions whose order statistic is already final ("pivots": everything left of a
    pivot is <= it, everything right of it >= it). A quantile query selects only inside
    the gap between the pivots around each position it needs, and a rank query counts
    only inside the gap its value falls in. The first query costs what one selection
    does; each later one works on a smaller gap, so the work done for earlier queries is
    reused and no query ever costs more than a selection over the whole sample. Sorting
    a large sample instead costs several selections (without a SIMD sort, over three at
    200,000 values) and loses when only a few queries come. A small sample (up to
    ``SORT_BELOW`` values) sorts about as fast as it selects, so it is sorted on its
    second quantile query, after which a quantile is an O(1) interpolation and a rank an
    O(log n) binary search.
    """

    SORT_BELOW = 4096

    def __init__(self, values):
        self.values = np.asarray(values, dtype=np.float64)
        self._part = None
        self._pivots = []  # sorted positions whose order statistic is in place
        self._pivot_values = []  # their values (non-decreasing)
        self._sorted = False
        self._queries = 0

    def _settle(self, positions):
        """Put the order statistics at ``positions`` (sorted, unique) in place in the
        working copy."""
        part, pivots = self._part, self._pivots
        if part is None:  # the first query: one selection over a copy, as before
            self._part = part = self.values.copy()
            part.partition(positions)
            self._pivots = positions.tolist()
            self._pivot_values = part[positions].tolist()
            return
        todo = []
        for p in positions.tolist():
            k = bisect_left(pivots, p)
            if k == len(pivots) or pivots[k] != p:
                todo.append(p)
        i = 0
        while i < len(todo):
            # positions sharing one gap are selected together, on the gap's slice only
            g = bisect_left(pivots, todo[i])
            end = pivots[g] if g < len(pivots) else len(part)
            start = pivots[g - 1] + 1 if g else 0
            j = i
            while j < len(todo) and todo[j] < end:
                j += 1
            part[start:end].partition([p - start for p in todo[i:j]])
            i = j
        for p in todo:
            k = bisect_left(pivots, p)
            pivots.insert(k, p)
            self._pivot_values.insert(k, float(part[p]))

    def quantile(self, q):
        """Linear-interpolated quantile(s) ``q`` in [0, 1] (numpy's default method)."""
        self._queries += 1
        if not self._sorted:
            if self._queries >= 2 and len(self.values) <= self.SORT_BELOW:
                self._part = np.sort(self.values)
                self._sorted = True
            else:
                self._settle(_positions(len(self.values), q))
        return _interp(self._part, q)

    def fraction_below(self, x):
        """Share of the sample strictly below ``x``."""
        if self._sorted:
            return float(np.searchsorted(self._part, x, side="left")) / len(self.values)
        if not self._pivots:  # nothing known yet: one scan, as before
            return float(np.count_nonzero(self.values < x)) / len(self.values)
        # pivots below x have everything left of them below x; pivots >= x everything
        # right of them >= x; only the gap between the two is scanned
        k = bisect_left(self._pivot_values, x)
        start = self._pivots[k - 1] + 1 if k else 0
        end = self._pivots[k] if k < len(self._pivots) else len(self._part)
        below = start + int(np.count_nonzero(self._part[start:end] < x))
        return float(below) / len(self.values)
