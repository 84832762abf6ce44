import numpy as np
from groupby import group_means, group_sums


class Groups:
    params = [[10, 1000]]
    param_names = ["n_groups"]

    def setup(self, n_groups):
        rng = np.random.default_rng(0)
        self.keys = rng.integers(0, n_groups, size=20000)
        self.values = rng.normal(size=20000)

    def time_sums(self, n_groups):
        return group_sums(self.keys, self.values, n_groups)

    def time_means(self, n_groups):
        return group_means(self.keys, self.values, n_groups)
