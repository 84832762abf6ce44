import numpy as np
from kclust import assign, inertia

_DATA: dict = {}


def _data(n, k, d=3):
    key = (n, k, d)
    if key not in _DATA:
        rng = np.random.default_rng(n + k)
        _DATA[key] = (rng.standard_normal((n, d)), rng.standard_normal((k, d)))
    return _DATA[key]


class Assign:
    params = [[500, 4_000, 16_000, 48_000], [4, 16, 32]]
    param_names = ["n", "k"]
    warmup_time = 0.02

    def setup(self, n, k):
        self.points, self.centroids = _data(n, k)

    def time_assign(self, n, k):
        return assign(self.points, self.centroids)


class Inertia:
    params = [[4_000, 64_000], [8]]
    param_names = ["n", "k"]
    warmup_time = 0.02

    def setup(self, n, k):
        self.points, self.centroids = _data(n, k, 2)

    def time_inertia(self, n, k):
        return inertia(self.points, self.centroids)
