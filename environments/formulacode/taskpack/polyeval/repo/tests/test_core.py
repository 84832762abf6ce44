import numpy as np
from polyeval import polyval, polyval_derivative


def test_polyval():
    x = np.linspace(-2, 2, 9)
    np.testing.assert_allclose(polyval([1, -2, 3], x), 1 - 2 * x + 3 * x**2)


def test_derivative():
    x = np.linspace(-2, 2, 9)
    np.testing.assert_allclose(polyval_derivative([1, -2, 3], x), -2 + 6 * x)
