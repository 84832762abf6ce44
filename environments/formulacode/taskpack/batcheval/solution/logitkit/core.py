import numpy as np


def predict_proba(weights, X):
    """P(y=1 | x) for each row of X under a logistic model (weights[0] = bias)."""
    weights = np.asarray(weights, dtype=float)
    z = np.asarray(X, dtype=float) @ weights[1:] + weights[0]
    return 1.0 / (1.0 + np.exp(-z))


def predict(weights, X, threshold=0.5):
    """0/1 labels."""
    return (predict_proba(weights, X) >= threshold).astype(int)
