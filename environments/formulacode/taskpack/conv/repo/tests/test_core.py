import numpy as np
from filterkit import fir_filter, smooth


def test_fir():
    np.testing.assert_allclose(fir_filter([1, 2, 3], [0, 1, 0.5]), [0, 1, 2.5, 4, 1.5])


def test_smooth_constant():
    np.testing.assert_allclose(smooth(np.ones(10), 3)[1:-1], 1.0)
