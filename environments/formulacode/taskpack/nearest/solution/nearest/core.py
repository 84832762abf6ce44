import numpy as np


def snap_to_grid(grid, queries):
    """For each query, the grid value closest to it (ties -> smaller value)."""
    g = np.sort(np.asarray(grid, dtype=float))
    q = np.asarray(queries, dtype=float)
    right = np.clip(np.searchsorted(g, q), 1, len(g) - 1) if len(g) > 1 else np.zeros(len(q), int)
    left = np.maximum(right - 1, 0)
    take_right = np.abs(g[right] - q) < np.abs(g[left] - q)
    return np.where(take_right, g[right], g[left])
