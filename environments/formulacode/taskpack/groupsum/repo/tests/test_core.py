import numpy as np
from groupby import group_means, group_sums


def test_sums_and_means():
    keys = np.array([0, 2, 0, 2, 2])
    vals = np.array([1.0, 2.0, 3.0, 4.0, 6.0])
    np.testing.assert_allclose(group_sums(keys, vals, 3), [4.0, 0.0, 12.0])
    means = group_means(keys, vals, 3)
    assert np.isnan(means[1]) and means[0] == 2.0 and means[2] == 4.0
