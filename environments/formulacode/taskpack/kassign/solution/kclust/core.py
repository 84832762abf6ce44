"""Nearest-centroid assignment (the E-step of k-means)."""

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

BLOCK = 1024  # rows per block: bounds the (block, k, d) temporary
_MIN_BLOCKS = 4  # fewer blocks finish before a pool thread is awake
_POOL = None


def _workers():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _pool():
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=_workers())
    return _POOL


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
    blocks = [(lo, min(n, lo + BLOCK)) for lo in range(0, n, BLOCK)]
    workers = _workers()

    def run(share):
        for lo, hi in share:
            _block(points, centroids, labels, dist, lo, hi)

    if workers < 2 or len(blocks) < _MIN_BLOCKS:
        run(blocks)
        return labels, dist
    # one task per worker over every workers-th block: blocks write disjoint rows and
    # numpy releases the GIL inside each block's arithmetic
    futures = [_pool().submit(run, blocks[w::workers]) for w in range(workers)]
    for f in futures:
        f.result()
    return labels, dist


def inertia(points, centroids):
    """Sum of squared distances of the points to their nearest centroid."""
    return float(assign(points, centroids)[1].sum())
