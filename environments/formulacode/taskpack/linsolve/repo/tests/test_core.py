import numpy as np
from linsolve import residual_norm, solve_many


def test_solution():
    rng = np.random.default_rng(2)
    A = rng.normal(size=(6, 6)) + 6 * np.eye(6)
    B = rng.normal(size=(6, 3))
    np.testing.assert_allclose(A @ solve_many(A, B), B, atol=1e-10)
    assert residual_norm(A, B) < 1e-9
