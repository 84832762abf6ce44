"""Histogram-style statistics over sorted bin edges."""

import numpy as np


def _bin_index(values, edges):
    """Bin of each value: i for edges[i] <= v < edges[i + 1]; -1 outside [edges[0], edges[-1])."""
    edges = np.asarray(edges, dtype=np.float64)
    idx = np.searchsorted(edges, np.asarray(values, dtype=np.float64), side="right") - 1
    idx[(idx < 0) | (idx >= len(edges) - 1)] = -1
    return idx


def bin_counts(values, edges):
    """How many values fall in each bin (values outside the edges are dropped)."""
    idx = _bin_index(values, edges)
    return np.bincount(idx[idx >= 0], minlength=len(edges) - 1).astype(np.int64)


def bin_means(values, weights, edges):
    """Mean weight of the values in each bin (NaN for an empty bin)."""
    idx = _bin_index(values, edges)
    keep = idx >= 0
    weights = np.asarray(weights, dtype=np.float64)
    if len(weights) != len(idx):
        raise ValueError("values and weights differ in length")
    sums = np.bincount(idx[keep], weights=weights[keep], minlength=len(edges) - 1)
    counts = np.bincount(idx[keep], minlength=len(edges) - 1).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts
