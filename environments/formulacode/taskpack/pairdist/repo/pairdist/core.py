import numpy as np


def pairwise_distances(X, Y):
    """Euclidean distance between every row of X and every row of Y."""
    X = np.asarray(X, dtype=float)
    Y = np.asarray(Y, dtype=float)
    out = np.empty((X.shape[0], Y.shape[0]))
    for i in range(X.shape[0]):
        for j in range(Y.shape[0]):
            out[i, j] = np.sqrt(np.sum((X[i] - Y[j]) ** 2))
    return out


def nearest_index(X, Y):
    """Index of the nearest row of Y for each row of X."""
    return np.argmin(pairwise_distances(X, Y), axis=1)
