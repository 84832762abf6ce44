"""Solving one system for many right-hand sides."""

import numpy as np


def solve_many(A, rhs):
    """x_i with A @ x_i = b_i for each right-hand side b_i (rows of ``rhs``)."""
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(rhs, dtype=np.float64)
    # one LU solve for all right-hand sides: no explicit inverse, no per-row products
    return np.linalg.solve(A, B.T).T.copy()
