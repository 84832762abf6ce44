import numpy as np


def normalize_rows(M):
    """(M - mean(M)) / sum(|M|), row by row."""
    M = np.asarray(M, dtype=float)
    total = np.abs(M).sum()
    mean = M.mean()
    return (M - mean) / total
