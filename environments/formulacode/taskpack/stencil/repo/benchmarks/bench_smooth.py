import numpy as np
from smooth import smooth

_DATA: dict = {}


def _grid(size):
    if size not in _DATA:
        _DATA[size] = np.random.default_rng(size).random((size, size))
    return _DATA[size]


class Smooth:
    params = [[40, 300, 1_200, 1_800], [1, 3], ["cross", "box"]]
    param_names = ["size", "iterations", "kernel"]
    warmup_time = 0.02

    def setup(self, size, iterations, kernel):
        self.grid = _grid(size)

    def time_smooth(self, size, iterations, kernel):
        return smooth(self.grid, iterations, kernel)
