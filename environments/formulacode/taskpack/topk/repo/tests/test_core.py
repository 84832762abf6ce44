import numpy as np
from topsel import top_k, top_k_rows


def test_top_k_descending_with_ties():
    assert top_k([3, 1, 3, 2, 5], 3).tolist() == [5, 3, 3]
    assert top_k([1.0, 2.0], 5).tolist() == [2.0, 1.0]


def test_rows():
    M = np.random.default_rng(0).standard_normal((6, 9))
    assert np.array_equal(top_k_rows(M, 4), -np.sort(-M, axis=1)[:, :4])
