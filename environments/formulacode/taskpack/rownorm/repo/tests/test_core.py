import numpy as np
from rownorm import normalize_rows


def test_normalize():
    M = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(normalize_rows(M), (M - 2.5) / 10.0)
