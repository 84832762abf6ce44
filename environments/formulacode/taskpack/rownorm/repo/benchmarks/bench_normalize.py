import numpy as np
from rownorm import normalize_rows


class Normalize:
    params = [[100, 200], [100]]
    param_names = ["rows", "cols"]

    def setup(self, rows, cols):
        self.M = np.random.default_rng(0).normal(size=(rows, cols))

    def time_normalize(self, rows, cols):
        return normalize_rows(self.M)
