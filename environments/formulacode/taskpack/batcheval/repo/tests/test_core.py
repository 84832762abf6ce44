import numpy as np
from logitkit import predict, predict_proba


def test_proba():
    w = np.array([0.0, 1.0])
    np.testing.assert_allclose(predict_proba(w, [[0.0], [100.0]]), [0.5, 1.0])
    assert list(predict(w, [[-3.0], [3.0]])) == [0, 1]
