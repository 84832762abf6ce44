"""Gaussian-kernel ridge regression."""

import numpy as np


def _kernel(A, B, gamma):
    d2 = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * (A @ B.T)
    return np.exp(-gamma * np.maximum(d2, 0.0))


class KernelRidge:
    """``fit(X, y)`` stores the training data; ``predict(Q)`` returns K(Q, X) @ alpha."""

    def __init__(self, gamma=0.5, alpha=1e-3):
        self.gamma, self.alpha = gamma, alpha

    def fit(self, X, y):
        self.X_ = np.asarray(X, dtype=np.float64)
        self.y_ = np.asarray(y, dtype=np.float64)
        return self

    def _dual(self):
        K = _kernel(self.X_, self.X_, self.gamma)
        K[np.diag_indices_from(K)] += self.alpha
        return np.linalg.solve(K, self.y_)

    def predict(self, Q):
        Q = np.asarray(Q, dtype=np.float64)
        return _kernel(Q, self.X_, self.gamma) @ self._dual()
