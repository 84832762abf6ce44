import numpy as np
from colsum import describe

_DATA: dict = {}


def _table(n, m):
    if (n, m) not in _DATA:
        _DATA[n, m] = np.random.default_rng(n + m).normal(5.0, 2.0, size=(n, m))
    return _DATA[n, m]


class Describe:
    params = [[1_000, 10_000, 50_000], [2, 8, 16], [0, 1]]
    param_names = ["n", "m", "ddof"]
    warmup_time = 0.02

    def setup(self, n, m, ddof):
        self.X = _table(n, m)

    def time_describe(self, n, m, ddof):
        return describe(self.X, ddof)
