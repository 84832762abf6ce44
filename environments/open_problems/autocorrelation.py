"""First autocorrelation inequality: an upper bound from a non-negative step function.

For ``f >= 0`` supported on ``[-1/4, 1/4]``, ``max_t (f*f)(t) >= C * (integral f)^2``;
every ``f`` gives the upper bound ``C <= max(f*f) / (integral f)^2``. A solution is the
list of heights ``h_0..h_{n-1}`` of ``f`` on ``n`` equal steps of width ``w = 1/(2n)``.

Why the formula below is exact: ``f*f`` is then piecewise linear with knots at
``-1/2 + k*w``, where it equals ``w * sum_{i+j=k-1} h_i h_j`` (a sum of hat functions),
so its maximum is ``w * max(conv(h, h))`` and the bound is
``max(conv(h, h)) / (w * sum(h)^2) = 2n * max(conv(h, h)) / sum(h)^2``. A constant ``f``
gives exactly 2. The convolution is computed in float64 (relative error ~1e-15, far below
the digits that separate published bounds).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from environments.open_problems.verdict import Verdict, as_real

MAX_STEPS = 100_000
"""Largest accepted number of steps (keeps the O(n^2) check bounded)."""


def autocorrelation_bound(heights: np.ndarray) -> float:
    """``2n * max(h*h) / sum(h)^2`` for non-negative heights with a positive sum."""
    n = len(heights)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow -> inf/nan, caught by caller
        conv = np.convolve(heights, heights)
        return float(2 * n * conv.max() / heights.sum() ** 2)


def verify_autocorrelation(data: Any, max_steps: int = MAX_STEPS) -> Verdict:
    """Check a step function and return its autocorrelation bound if it is valid.

    Args:
        data: Parsed JSON: a list of step heights.
        max_steps: Largest accepted number of steps.
    """
    if not isinstance(data, list):
        return Verdict.reject(f"malformed: expected a list of heights, got {type(data).__name__}")
    if not 1 <= len(data) <= max_steps:
        return Verdict.reject(f"malformed: expected 1..{max_steps} heights, got {len(data)}")
    try:
        heights = np.array([as_real(v, f"height {i}") for i, v in enumerate(data)])
    except ValueError as err:
        return Verdict.reject(f"malformed: {err}")
    negative = np.flatnonzero(heights < 0)
    if negative.size:
        i = int(negative[0])
        return Verdict.reject(f"height {i} is negative ({heights[i]}): f must be non-negative")
    if heights.sum() <= 0:
        return Verdict.reject("all heights are zero: the integral of f must be positive")
    bound = autocorrelation_bound(heights)
    if not np.isfinite(bound):
        return Verdict.reject("heights too large: the bound overflows float64")
    return Verdict(
        valid=True,
        score=bound,
        reason=f"valid step function with {len(heights)} steps",
    )
