import numpy as np
from logitkit import predict, predict_proba


class Score:
    params = [[2000, 4000]]
    param_names = ["rows"]

    def setup(self, rows):
        rng = np.random.default_rng(0)
        self.w = rng.normal(size=9)
        self.X = rng.normal(size=(rows, 8))

    def time_proba(self, rows):
        return predict_proba(self.w, self.X)

    def time_labels(self, rows):
        return predict(self.w, self.X)
