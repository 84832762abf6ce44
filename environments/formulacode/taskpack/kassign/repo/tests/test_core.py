import numpy as np
from kclust import assign, inertia


def _brute(points, centroids):
    d2 = ((points[:, None, :] - centroids[None]) ** 2).sum(axis=2)
    return d2.argmin(axis=1), d2.min(axis=1)


def test_matches_brute_force_across_blocks():
    rng = np.random.default_rng(1)
    points, centroids = rng.standard_normal((5000, 3)), rng.standard_normal((7, 3))
    labels, dist = assign(points, centroids)
    ref_labels, ref_dist = _brute(points, centroids)
    assert np.array_equal(labels, ref_labels)
    assert np.allclose(dist, ref_dist)


def test_ties_go_to_lowest_index_and_inertia():
    points = np.array([[0.0, 0.0], [2.0, 0.0]])
    centroids = np.array([[1.0, 0.0], [1.0, 0.0], [3.0, 0.0]])
    labels, dist = assign(points, centroids)
    assert labels.tolist() == [0, 0] and dist.tolist() == [1.0, 1.0]
    assert inertia(points, centroids) == 2.0
