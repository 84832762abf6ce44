import numpy as np
from topsel import top_k, top_k_rows

_DATA: dict = {}


def _data(shape):
    if shape not in _DATA:
        _DATA[shape] = np.random.default_rng(sum(shape)).standard_normal(shape)
    return _DATA[shape]


class TopK:
    params = [[1_000, 30_000, 300_000], [10, 1_000]]
    param_names = ["n", "k"]
    warmup_time = 0.02

    def setup(self, n, k):
        self.x = _data((n,))

    def time_top_k(self, n, k):
        return top_k(self.x, k)


class TopKRows:
    params = [[20, 200], [64, 2_048], [4, 32]]
    param_names = ["rows", "cols", "k"]
    warmup_time = 0.02

    def setup(self, rows, cols, k):
        self.M = _data((rows, cols))

    def time_top_k_rows(self, rows, cols, k):
        return top_k_rows(self.M, k)
