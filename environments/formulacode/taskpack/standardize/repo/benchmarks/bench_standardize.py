import numpy as np
from zscore import standardize

_DATA: dict = {}


def _matrix(n, m):
    if (n, m) not in _DATA:
        _DATA[n, m] = np.random.default_rng(n * m).normal(3.0, 2.0, size=(n, m))
    return _DATA[n, m]


class Standardize:
    params = [[200, 5_000, 50_000], [4, 32]]
    param_names = ["n", "m"]
    warmup_time = 0.02

    def setup(self, n, m):
        self.X = _matrix(n, m)

    def time_standardize(self, n, m):
        return standardize(self.X)

    def peakmem_standardize(self, n, m):
        return standardize(self.X)
