import numpy as np
from ranks import rank_columns, spearman


def test_ranks_are_stable_ordinal_ranks():
    X = np.array([[3, 1], [1, 1], [2, 0], [1, 5]])
    assert rank_columns(X).tolist() == [[3, 1], [0, 2], [2, 0], [1, 3]]


def test_each_column_is_a_permutation():
    X = np.random.default_rng(0).integers(0, 5, size=(200, 9))
    R = rank_columns(X)
    for j in range(9):
        assert sorted(R[:, j]) == list(range(200))
        assert np.all(np.diff(X[np.argsort(R[:, j]), j]) >= 0)


def test_long_columns_match_a_per_column_argsort():
    X = np.random.default_rng(1).standard_normal((30_000, 5))
    R = rank_columns(X)
    for j in range(5):
        assert np.array_equal(np.argsort(R[:, j]), np.argsort(X[:, j], kind="stable"))


def test_spearman_of_monotone_columns_is_one():
    x = np.linspace(0, 1, 50)
    S = spearman(np.column_stack([x, x ** 3, -x]))
    assert np.allclose(S, [[1, 1, -1], [1, 1, -1], [-1, -1, 1]])
