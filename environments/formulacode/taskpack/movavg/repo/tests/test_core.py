import numpy as np
from movavg import detrend, rolling_mean


def test_rolling_mean():
    x = np.arange(10.0)
    np.testing.assert_allclose(rolling_mean(x, 3), np.arange(1.0, 9.0))


def test_detrend_of_constant_is_zero():
    np.testing.assert_allclose(detrend(np.full(20, 4.0), 5), 0.0, atol=1e-12)
