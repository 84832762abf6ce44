import numpy as np
from scorer import MLP, score_all


def test_scores_equal_row_by_row_predictions():
    model = MLP(5, 7)
    items = list(np.random.default_rng(1).standard_normal((600, 5)))
    got = score_all(model, items)
    assert got.shape == (600,)
    assert np.allclose(got, [model.predict(x[None])[0] for x in items])


def test_empty():
    assert score_all(MLP(3, 2), []).shape == (0,)
