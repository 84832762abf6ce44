import numpy as np
from growarray import collect_positive, running_totals


def test_running_totals():
    np.testing.assert_allclose(running_totals([1, 2, 3]), [1.0, 3.0, 6.0])
    assert running_totals([]).shape == (0,)


def test_collect_positive():
    out = collect_positive([1.0, -1.0, 2.5, 0.0])
    np.testing.assert_array_equal(out, [1.0, 2.5])
    assert out.dtype == np.float64
