import numpy as np


def snap_to_grid(grid, queries):
    """For each query, the grid value closest to it (ties -> smaller value)."""
    grid = sorted(float(g) for g in grid)
    out = []
    for q in queries:
        best = grid[0]
        for g in grid:
            if abs(g - q) < abs(best - q):
                best = g
        out.append(best)
    return np.array(out)
