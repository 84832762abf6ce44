"""Nearest-centroid assignment (the E-step of k-means)."""

import numpy as np

BLOCK = 1024  # rows per block: bounds the (block, k, d) temporary


def _block(points, centroids, labels, dist, lo, hi):
    diff = points[lo:hi, None, :] - centroids[None, :, :]
    d2 = (diff * diff).sum(axis=2)
    lab = d2.argmin(axis=1)
    labels[lo:hi] = lab
    dist[lo:hi] = np.take_along_axis(d2, lab[:, None], axis=1)[:, 0]


def assign(points, centroids):
    """(labels, squared distances): the nearest centroid of every point (ties: lowest index)."""
    points = np.ascontiguousarray(points, dtype=np.float64)
    centroids = np.ascontiguousarray(centroids, dtype=np.float64)
    n = len(points)
    labels = np.empty(n, dtype=np.intp)
    dist = np.empty(n, dtype=np.float64)
    for lo in range(0, n, BLOCK):
        _block(points, centroids, labels, dist, lo, min(n, lo + BLOCK))
    return labels, dist


def inertia(points, centroids):
    """Sum of squared distances of the points to their nearest centroid."""
    return float(assign(points, centroids)[1].sum())
