import numpy as np
import pytest
from colsum import describe


@pytest.mark.parametrize("ddof", [0, 1])
def test_matches_numpy_per_column(ddof):
    X = np.random.default_rng(0).normal(size=(37, 5))
    d = describe(X, ddof)
    assert np.allclose(d["mean"], X.mean(0)) and np.allclose(d["std"], X.std(0, ddof=ddof))
    assert np.array_equal(d["min"], X.min(0)) and np.array_equal(d["max"], X.max(0))
    assert np.allclose(d["l2"], np.linalg.norm(X, axis=0))


def test_single_column():
    d = describe([[1.0], [3.0]])
    assert d["mean"].tolist() == [2.0] and d["std"].tolist() == [1.0]
