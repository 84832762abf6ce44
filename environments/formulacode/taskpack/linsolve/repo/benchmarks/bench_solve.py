import numpy as np
from linsys import solve_many

_DATA: dict = {}


def _system(n, k):
    if (n, k) not in _DATA:
        rng = np.random.default_rng(n * 100 + k)
        A = rng.standard_normal((n, n)) + n * np.eye(n)  # well conditioned
        _DATA[n, k] = (A, rng.standard_normal((k, n)))
    return _DATA[n, k]


class Solve:
    params = [[4, 16, 64], [1, 2, 8, 32]]
    param_names = ["n", "n_rhs"]
    warmup_time = 0.02

    def setup(self, n, n_rhs):
        self.A, self.B = _system(n, n_rhs)

    def time_solve_many(self, n, n_rhs):
        return solve_many(self.A, self.B)
