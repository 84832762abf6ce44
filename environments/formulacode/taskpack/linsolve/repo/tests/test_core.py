import numpy as np
from linsys import solve_many


def test_solutions_satisfy_the_system():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((30, 30)) + 30 * np.eye(30)
    B = rng.standard_normal((5, 30))
    X = solve_many(A, B)
    assert X.shape == (5, 30)
    assert np.allclose(X @ A.T, B)


def test_single_rhs():
    X = solve_many([[2.0, 0.0], [0.0, 4.0]], [[2.0, 2.0]])
    assert np.allclose(X, [[1.0, 0.5]])
