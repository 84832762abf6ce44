import numpy as np
from kernsmooth import KernelRidge

_DATA: dict = {}


def _data(n_train, n_query):
    key = (n_train, n_query)
    if key not in _DATA:
        rng = np.random.default_rng(n_train + n_query)
        X = rng.uniform(-3, 3, size=(n_train, 2))
        _DATA[key] = (X, np.sin(X[:, 0]) + X[:, 1], rng.uniform(-3, 3, size=(n_query, 2)))
    return _DATA[key]


class Predict:
    params = [[80, 250], [10, 2_000], [1, 3, 8]]
    param_names = ["n_train", "n_query", "calls"]
    number = 1  # a fresh model per call: each sample sees a cold model, as in use
    warmup_time = 0.02

    def setup(self, n_train, n_query, calls):
        X, y, self.Q = _data(n_train, n_query)
        self.model = KernelRidge().fit(X, y)

    def time_predict(self, n_train, n_query, calls):
        return [self.model.predict(self.Q) for _ in range(calls)]

    def time_fit_predict(self, n_train, n_query, calls):
        X, y = self.model.X_, self.model.y_
        return [KernelRidge().fit(X, y).predict(self.Q) for _ in range(calls)]
