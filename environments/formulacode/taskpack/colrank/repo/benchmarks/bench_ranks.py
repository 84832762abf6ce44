import numpy as np
from ranks import rank_columns, spearman

_DATA: dict = {}


def _data(n, m, dtype):
    key = (n, m, dtype)
    if key not in _DATA:
        rng = np.random.default_rng(n * 31 + m)
        if dtype == "float":
            _DATA[key] = rng.standard_normal((n, m))
        else:
            _DATA[key] = rng.integers(0, max(2, n // 10), size=(n, m))
    return _DATA[key]


class Rank:
    params = [[300, 3_000, 30_000], [2, 6, 12], ["float", "int"]]
    param_names = ["n", "m", "dtype"]
    warmup_time = 0.02

    def setup(self, n, m, dtype):
        self.X = _data(n, m, dtype)

    def time_rank_columns(self, n, m, dtype):
        return rank_columns(self.X)


class Spearman:
    params = [[2_000, 20_000]]
    param_names = ["n"]
    warmup_time = 0.02

    def setup(self, n):
        self.X = _data(n, 8, "float")

    def time_spearman(self, n):
        return spearman(self.X)
