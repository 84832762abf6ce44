import numpy as np
from winfeat import rolling_mean, rolling_std

_DATA: dict = {}


def _series(n):
    if n not in _DATA:
        _DATA[n] = np.cumsum(np.random.default_rng(n).standard_normal(n)) + 100.0
    return _DATA[n]


class Rolling:
    params = [[1_000, 100_000], [2, 3, 5]]
    param_names = ["n", "window"]
    warmup_time = 0.02

    def setup(self, n, window):
        self.x = _series(n)

    def time_rolling_mean(self, n, window):
        return rolling_mean(self.x, window)

    def time_rolling_std(self, n, window):
        return rolling_std(self.x, window)

    def peakmem_rolling_mean(self, n, window):
        return rolling_mean(self.x, window)

    def peakmem_rolling_std(self, n, window):
        return rolling_std(self.x, window)
