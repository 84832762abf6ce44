import numpy as np
from sparselite import COOMatrix, power_iteration


def test_matvec_with_duplicates():
    A = COOMatrix([0, 0, 1], [1, 1, 0], [1.0, 2.0, 5.0], (3, 2))
    np.testing.assert_allclose(A.matvec([1.0, 10.0]), [30.0, 5.0, 0.0])


def test_power_iteration_diagonal():
    A = COOMatrix([0, 1, 2], [0, 1, 2], [1.0, 5.0, 2.0], (3, 3))
    v = power_iteration(A, 60)
    assert abs(abs(v[1]) - 1.0) < 1e-6
