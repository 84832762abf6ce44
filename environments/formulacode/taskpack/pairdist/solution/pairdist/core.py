import numpy as np


def pairwise_distances(X, Y):
    """Euclidean distance between every row of X and every row of Y."""
    X = np.asarray(X, dtype=float)
    Y = np.asarray(Y, dtype=float)
    diff = X[:, None, :] - Y[None, :, :]
    return np.sqrt(np.einsum("ijk,ijk->ij", diff, diff))


def nearest_index(X, Y):
    """Index of the nearest row of Y for each row of X."""
    return np.argmin(pairwise_distances(X, Y), axis=1)
