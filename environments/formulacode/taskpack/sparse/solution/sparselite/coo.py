import numpy as np


class COOMatrix:
    """A sparse matrix in coordinate format (duplicates are summed)."""

    def __init__(self, rows, cols, vals, shape):
        self.rows = np.asarray(rows, dtype=np.int64)
        self.cols = np.asarray(cols, dtype=np.int64)
        self.vals = np.asarray(vals, dtype=float)
        self.shape = shape

    def todense(self):
        out = np.zeros(self.shape)
        np.add.at(out, (self.rows, self.cols), self.vals)
        return out

    def matvec(self, x):
        x = np.asarray(x, dtype=float)
        return np.bincount(self.rows, weights=self.vals * x[self.cols], minlength=self.shape[0])


def power_iteration(A, steps):
    """Dominant-eigenvector estimate after ``steps`` normalised products."""
    v = np.ones(A.shape[1]) / np.sqrt(A.shape[1])
    for _ in range(steps):
        v = A.matvec(v)
        v = v / np.linalg.norm(v)
    return v
