import numpy as np
from growarray import collect_positive, running_totals


class Build:
    params = [[1500, 3000]]
    param_names = ["n"]

    def setup(self, n):
        self.values = list(np.random.default_rng(0).normal(size=n))

    def time_running_totals(self, n):
        return running_totals(self.values)

    def time_collect_positive(self, n):
        return collect_positive(self.values)
