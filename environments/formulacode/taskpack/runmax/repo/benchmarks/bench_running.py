import numpy as np
from winmax import running_max, running_min

_DATA: dict = {}


def _series(n):
    if n not in _DATA:
        _DATA[n] = np.cumsum(np.random.default_rng(n).standard_normal(n))
    return _DATA[n]


class Running:
    params = [[2_000, 50_000], [2, 3, 6, 12]]
    param_names = ["n", "window"]
    warmup_time = 0.02

    def setup(self, n, window):
        self.x = _series(n)

    def time_running_max(self, n, window):
        return running_max(self.x, window)

    def time_running_min(self, n, window):
        return running_min(self.x, window)
