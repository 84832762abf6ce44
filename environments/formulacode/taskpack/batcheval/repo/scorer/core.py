"""Scoring items with a small two-layer network."""

import numpy as np


class MLP:
    def __init__(self, n_in, n_hidden, seed=0):
        rng = np.random.default_rng(seed)
        self.W1 = rng.standard_normal((n_in, n_hidden)) / np.sqrt(n_in)
        self.b1 = rng.standard_normal(n_hidden) * 0.1
        self.w2 = rng.standard_normal(n_hidden) / np.sqrt(n_hidden)

    def predict(self, X):
        """Scores of the rows of ``X`` (n, n_in) -> (n,)."""
        return np.tanh(X @ self.W1 + self.b1) @ self.w2


def score_all(model, items):
    """Score every item (each a 1-D feature vector)."""
    return np.array([model.predict(np.asarray(x, dtype=np.float64)[None, :])[0] for x in items])
