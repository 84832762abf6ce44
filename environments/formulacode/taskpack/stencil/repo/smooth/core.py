"""Iterated 2-D smoothing stencils with replicated edges."""

import numpy as np

KERNELS = ("cross", "box")


def _band(P, new, lo, hi, kernel):
    """Rows lo:hi of one smoothing step from the edge-padded grid ``P``."""
    c = P[lo + 1:hi + 1, 1:-1]
    n, s = P[lo:hi, 1:-1], P[lo + 2:hi + 2, 1:-1]
    w, e = P[lo + 1:hi + 1, :-2], P[lo + 1:hi + 1, 2:]
    if kernel == "cross":
        new[lo:hi] = (4.0 * c + n + s + w + e) * 0.125
    else:
        nw, ne = P[lo:hi, :-2], P[lo:hi, 2:]
        sw, se = P[lo + 2:hi + 2, :-2], P[lo + 2:hi + 2, 2:]
        new[lo:hi] = (c + n + s + w + e + nw + ne + sw + se) / 9.0


def smooth(grid, iterations=1, kernel="cross"):
    """``iterations`` steps of the ``kernel`` stencil over ``grid`` (a new float64 array)."""
    if kernel not in KERNELS:
        raise ValueError(f"unknown kernel {kernel!r}")
    g = np.array(grid, dtype=np.float64)
    for _ in range(iterations):
        P = np.pad(g, 1, mode="edge")
        new = np.empty_like(g)
        _band(P, new, 0, g.shape[0], kernel)
        g = new
    return g
