"""Column standardisation of feature matrices."""

import numpy as np

_ROWS = 4096  # rows per chunk for the variance pass


def standardize(X, eps=1e-12):
    """(X - column mean) / column std, as a new float64 matrix."""
    X = np.asarray(X, dtype=np.float64)
    out = X - X.mean(axis=0)  # the only full-size array: everything else is in place
    n = len(out)
    sq = np.zeros(out.shape[1:])
    buf = np.empty((min(_ROWS, n),) + out.shape[1:])
    for lo in range(0, n, _ROWS):
        block = out[lo:lo + _ROWS]
        tmp = buf[:len(block)]
        np.multiply(block, block, out=tmp)
        sq += tmp.sum(axis=0)
    out /= np.maximum(np.sqrt(sq / n), eps)
    return out
