import numpy as np
from kernsmooth import KernelRidge


def test_interpolates_training_points():
    X = np.linspace(-2, 2, 15)[:, None]
    y = np.sin(X[:, 0])
    model = KernelRidge(gamma=2.0, alpha=1e-8).fit(X, y)
    np.testing.assert_allclose(model.predict(X), y, atol=1e-4)


def test_refit_changes_predictions():
    X = np.linspace(-2, 2, 10)[:, None]
    model = KernelRidge().fit(X, np.zeros(10))
    first = model.predict(X)
    model.fit(X, np.ones(10))
    assert not np.allclose(first, model.predict(X))
