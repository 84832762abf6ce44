"""Histogram-style statistics over sorted bin edges."""

import bisect

import numpy as np


def _bin_index(values, edges):
    """Bin of each value: i for edges[i] <= v < edges[i + 1]; -1 outside [edges[0], edges[-1])."""
    edges = [float(e) for e in edges]
    last = len(edges) - 1
    out = []
    for v in np.asarray(values, dtype=np.float64).tolist():
        i = bisect.bisect_right(edges, v) - 1
        out.append(i if 0 <= i < last else -1)
    return out


def bin_counts(values, edges):
    """How many values fall in each bin (values outside the edges are dropped)."""
    counts = np.zeros(len(edges) - 1, dtype=np.int64)
    for i in _bin_index(values, edges):
        if i >= 0:
            counts[i] += 1
    return counts


def bin_means(values, weights, edges):
    """Mean weight of the values in each bin (NaN for an empty bin)."""
    sums = np.zeros(len(edges) - 1)
    counts = np.zeros(len(edges) - 1)
    weights = np.asarray(weights, dtype=np.float64).tolist()
    for i, w in zip(_bin_index(values, edges), weights, strict=True):
        if i >= 0:
            sums[i] += w
            counts[i] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts
