import numpy as np
from nearest import snap_to_grid


def test_snap():
    out = snap_to_grid([0.0, 1.0, 2.0], [-5.0, 0.4, 0.5, 1.6, 9.0])
    np.testing.assert_array_equal(out, [0.0, 0.0, 0.0, 2.0, 2.0])


def test_matches_bruteforce():
    rng = np.random.default_rng(3)
    grid, q = rng.uniform(size=30), rng.uniform(size=50)
    ref = [grid[np.argmin(np.abs(grid - x))] for x in q]
    np.testing.assert_array_equal(snap_to_grid(grid, q), ref)
