import math

import numpy as np


def _score_row(weights, row):
    z = float(np.dot(weights[1:], row)) + float(weights[0])
    return 1.0 / (1.0 + math.exp(-z))


def predict_proba(weights, X):
    """P(y=1 | x) for each row of X under a logistic model (weights[0] = bias)."""
    weights = np.asarray(weights, dtype=float)
    return np.array([_score_row(weights, row) for row in np.asarray(X, dtype=float)])


def predict(weights, X, threshold=0.5):
    """0/1 labels."""
    return (predict_proba(weights, X) >= threshold).astype(int)
