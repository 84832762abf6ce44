import numpy as np
from kernsmooth import KernelRidge


def test_interpolates_training_points():
    X = np.linspace(-2, 2, 15)[:, None]
    y = np.cos(X[:, 0])
    model = KernelRidge(gamma=2.0, alpha=1e-8).fit(X, y)
    assert np.allclose(model.predict(X), y, atol=1e-4)


def test_refit_changes_predictions():
    X = np.linspace(0, 1, 10)[:, None]
    model = KernelRidge().fit(X, X[:, 0])
    first = model.predict(X)
    assert np.allclose(model.predict(X), first)
    model.fit(X, -X[:, 0])
    assert np.allclose(model.predict(X), -first)
