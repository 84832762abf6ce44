"""Gaussian-kernel ridge regression."""

import numpy as np


def _kernel(A, B, gamma):
    d2 = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * (A @ B.T)
    return np.exp(-gamma * np.maximum(d2, 0.0))


class KernelRidge:
    """``fit(X, y)`` stores the training data; ``predict(Q)`` returns K(Q, X) @ alpha.

    The dual coefficients depend only on the training data: they are solved for once, on
    the first prediction, and reused until the next ``fit``.
    """

    def __init__(self, gamma=0.5, alpha=1e-3):
        self.gamma, self.alpha = gamma, alpha
        self._coef = None

    def fit(self, X, y):
        self.X_ = np.asarray(X, dtype=np.float64)
        self.y_ = np.asarray(y, dtype=np.float64)
        self._coef = None
        return self

    def _dual(self):
        if self._coef is None:
            K = _kernel(self.X_, self.X_, self.gamma)
            K[np.diag_indices_from(K)] += self.alpha
            self._coef = np.linalg.solve(K, self.y_)
        return self._coef

    def predict(self, Q):
        Q = np.asarray(Q, dtype=np.float64)
        return _kernel(Q, self.X_, self.gamma) @ self._dual()
