import numpy as np
from kernsmooth import KernelRidge


class Predict:
    params = [[150, 250]]
    param_names = ["n_train"]

    def setup(self, n_train):
        rng = np.random.default_rng(0)
        X = rng.uniform(-3, 3, size=(n_train, 2))
        self.model = KernelRidge().fit(X, np.sin(X[:, 0]) + X[:, 1])
        self.queries = [rng.uniform(-3, 3, size=(5, 2)) for _ in range(4)]

    def time_predict_batches(self, n_train):
        return [self.model.predict(q) for q in self.queries]
