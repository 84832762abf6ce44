import numpy as np


def normalize_rows(M):
    """(M - mean(M)) / sum(|M|), row by row."""
    M = np.asarray(M, dtype=float)
    out = np.empty_like(M)
    for i in range(M.shape[0]):
        total = np.abs(M).sum()
        mean = M.mean()
        out[i] = (M[i] - mean) / total
    return out
