import numpy as np
from interplite import linear_interp, resample


def test_interp():
    out = linear_interp([0.0, 1.0, 2.0], [0.0, 10.0, 0.0], [-1.0, 0.5, 1.0, 1.5, 3.0])
    np.testing.assert_allclose(out, [0.0, 5.0, 10.0, 5.0, 0.0])


def test_resample_endpoints():
    out = resample(np.array([0.0, 1.0]), np.array([2.0, 4.0]), 3)
    np.testing.assert_allclose(out, [2.0, 3.0, 4.0])
