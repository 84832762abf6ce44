import numpy as np


def group_sums(keys, values, n_groups):
    """Sum of values per integer key in [0, n_groups)."""
    out = [0.0] * n_groups
    for k, v in zip(keys.tolist(), values.tolist(), strict=True):
        out[k] += v
    return np.array(out)


def group_means(keys, values, n_groups):
    """Mean of values per key (nan for empty groups)."""
    sums = group_sums(keys, values, n_groups)
    counts = group_sums(keys, np.ones(len(values)), n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts
