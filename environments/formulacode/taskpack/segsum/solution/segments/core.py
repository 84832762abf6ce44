"""Reductions over consecutive segments of a flat array (ragged rows)."""

import numpy as np


def _offsets(lengths):
    lengths = np.asarray(lengths, dtype=np.intp)
    return np.concatenate(([0], np.cumsum(lengths))), lengths


def _reduceat(ufunc, values, lengths, empty):
    offsets, lengths = _offsets(lengths)
    out = np.full(len(lengths), empty)
    nonempty = lengths > 0
    if values.size and nonempty.any():
        out[nonempty] = ufunc.reduceat(values, offsets[:-1][nonempty])
    return out


def segment_sums(values, lengths):
    """Sum of each segment (``lengths`` consecutive runs of ``values``; empty -> 0)."""
    return _reduceat(np.add, np.asarray(values, dtype=np.float64), lengths, 0.0)


def segment_max(values, lengths):
    """Maximum of each segment (empty -> -inf)."""
    return _reduceat(np.maximum, np.asarray(values, dtype=np.float64), lengths, -np.inf)
