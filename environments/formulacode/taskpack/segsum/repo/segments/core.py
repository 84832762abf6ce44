"""Reductions over consecutive segments of a flat array (ragged rows)."""

import numpy as np


def _offsets(lengths):
    lengths = np.asarray(lengths, dtype=np.intp)
    return np.concatenate(([0], np.cumsum(lengths))), lengths


def segment_sums(values, lengths):
    """Sum of each segment (``lengths`` consecutive runs of ``values``; empty -> 0)."""
    values = np.asarray(values, dtype=np.float64)
    offsets, lengths = _offsets(lengths)
    out = np.zeros(len(lengths))
    for i in range(len(lengths)):
        out[i] = values[offsets[i]:offsets[i + 1]].sum()
    return out


def segment_max(values, lengths):
    """Maximum of each segment (empty -> -inf)."""
    values = np.asarray(values, dtype=np.float64)
    offsets, lengths = _offsets(lengths)
    out = np.full(len(lengths), -np.inf)
    for i in range(len(lengths)):
        if lengths[i]:
            out[i] = values[offsets[i]:offsets[i + 1]].max()
    return out
