"""Scoring items with a small two-layer network."""

import numpy as np

BATCH = 256


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
    # stack items into batches: one matrix product per batch instead of one per item
    X = np.asarray(items, dtype=np.float64)
    if len(X) == 0:
        return np.zeros(0)
    return np.concatenate([model.predict(X[i:i + BATCH]) for i in range(0, len(X), BATCH)])
