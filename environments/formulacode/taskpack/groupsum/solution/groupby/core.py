import numpy as np


def group_sums(keys, values, n_groups):
    """Sum of values per integer key in [0, n_groups)."""
    return np.bincount(keys, weights=values, minlength=n_groups).astype(float)


def group_means(keys, values, n_groups):
    """Mean of values per key (nan for empty groups)."""
    sums = group_sums(keys, values, n_groups)
    counts = np.bincount(keys, minlength=n_groups).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts
