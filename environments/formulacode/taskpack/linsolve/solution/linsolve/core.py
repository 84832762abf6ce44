import numpy as np


def solve_many(A, B):
    """Solutions x_j of A x_j = B[:, j], stacked as columns."""
    A = np.asarray(A, dtype=float)
    B = np.asarray(B, dtype=float)
    return np.linalg.solve(A, B)


def residual_norm(A, B):
    """Largest residual norm of the solutions (a quality check)."""
    X = solve_many(A, B)
    return float(np.max(np.linalg.norm(A @ X - B, axis=0)))
