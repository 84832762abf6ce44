import numpy as np
from pairdist import nearest_index, pairwise_distances


class Distances:
    params = [[40, 80], [3]]
    param_names = ["n", "dim"]

    def setup(self, n, dim):
        rng = np.random.default_rng(0)
        self.X = rng.normal(size=(n, dim))
        self.Y = rng.normal(size=(n, dim))

    def time_pairwise(self, n, dim):
        return pairwise_distances(self.X, self.Y)

    def time_nearest(self, n, dim):
        return nearest_index(self.X, self.Y)
