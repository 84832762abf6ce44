import numpy as np
from pairdist import nearest_index, pairwise_distances


def test_matches_reference():
    rng = np.random.default_rng(1)
    X, Y = rng.normal(size=(7, 3)), rng.normal(size=(5, 3))
    ref = np.array([[np.linalg.norm(x - y) for y in Y] for x in X])
    np.testing.assert_allclose(pairwise_distances(X, Y), ref)


def test_nearest():
    X = np.array([[0.0, 0.0], [10.0, 10.0]])
    Y = np.array([[9.0, 9.0], [1.0, 0.0]])
    assert list(nearest_index(X, Y)) == [1, 0]
