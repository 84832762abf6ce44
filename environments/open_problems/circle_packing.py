"""Circle packing: ``n`` disjoint circles inside the unit square, maximise the sum of radii.

A solution is a list of ``[x, y, r]``. It is valid when there are exactly ``n`` circles,
every radius is non-negative, every circle lies in ``[0, 1]^2`` and no two circles overlap.
Touching is allowed, and every check is relaxed by :data:`TOLERANCE` (absolute), so a
packing computed in floating point that touches a wall or a neighbour is not rejected for
rounding: ``x - r >= -TOL``, ``x + r <= 1 + TOL`` (same for ``y``) and
``dist(c_i, c_j) >= r_i + r_j - TOL``. Pair distances use ``math.hypot``, one pair at a
time, so the check is exact up to one rounding per operation.
"""

from __future__ import annotations

import math
from typing import Any

from environments.open_problems.verdict import Verdict, as_real

DEFAULT_N = 26
TOLERANCE = 1e-9
"""Absolute slack on containment and non-overlap (stated in every reason that uses it)."""


def _circles(data: Any, n: int) -> list[tuple[float, float, float]]:
    if not isinstance(data, list):
        raise ValueError(f"expected a list of [x, y, r], got {type(data).__name__}")
    if len(data) != n:
        raise ValueError(f"expected {n} circles, got {len(data)}")
    circles = []
    for i, item in enumerate(data):
        if not isinstance(item, list | tuple) or len(item) != 3:
            raise ValueError(f"circle {i} is not a [x, y, r] triple: {item!r}")
        x, y, r = (as_real(v, f"circle {i} {name}") for v, name in zip(item, "xyr", strict=True))
        circles.append((x, y, r))
    return circles


def verify_circle_packing(data: Any, n: int = DEFAULT_N, tol: float = TOLERANCE) -> Verdict:
    """Check a packing and return the sum of radii if it is valid.

    Args:
        data: Parsed JSON: a list of ``[x, y, r]``.
        n: Required number of circles.
        tol: Absolute tolerance on containment and non-overlap.
    """
    try:
        circles = _circles(data, n)
    except ValueError as err:
        return Verdict.reject(f"malformed: {err}")
    for i, (x, y, r) in enumerate(circles):
        if r < 0:
            return Verdict.reject(f"circle {i} has a negative radius {r}")
        if x - r < -tol or x + r > 1 + tol or y - r < -tol or y + r > 1 + tol:
            return Verdict.reject(
                f"circle {i} at ({x}, {y}) with radius {r} leaves the unit square "
                f"(tolerance {tol})"
            )
    for i in range(n):
        xi, yi, ri = circles[i]
        for j in range(i + 1, n):
            xj, yj, rj = circles[j]
            gap = math.hypot(xi - xj, yi - yj) - (ri + rj)
            if gap < -tol:
                return Verdict.reject(
                    f"circles {i} and {j} overlap by {-gap:.3g} (tolerance {tol})"
                )
    total = math.fsum(r for _, _, r in circles)
    return Verdict(valid=True, score=total, reason=f"valid packing of {n} circles")
