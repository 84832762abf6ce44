import numpy as np
from zscore import standardize


def test_zero_mean_unit_std():
    X = np.random.default_rng(0).normal(5, 3, size=(9000, 3))
    Z = standardize(X)
    assert np.allclose(Z.mean(0), 0, atol=1e-12) and np.allclose(Z.std(0), 1)
    assert np.allclose(Z, (X - X.mean(0)) / X.std(0))


def test_constant_column_and_input_untouched():
    X = np.array([[1.0, 2.0], [1.0, 4.0]])
    Z = standardize(X)
    assert Z.tolist() == [[0.0, -1.0], [0.0, 1.0]] and X.tolist() == [[1.0, 2.0], [1.0, 4.0]]
