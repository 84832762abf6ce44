import numpy as np
from sparselite import COOMatrix, power_iteration


def _matrix(n, nnz):
    rng = np.random.default_rng(0)
    return COOMatrix(rng.integers(0, n, nnz), rng.integers(0, n, nnz), rng.random(nnz), (n, n))


class Matvec:
    params = [[800, 1600]]
    param_names = ["n"]

    def setup(self, n):
        self.A = _matrix(n, 4 * n)
        self.x = np.random.default_rng(1).normal(size=n)

    def time_matvec(self, n):
        return self.A.matvec(self.x)


class Power:
    def setup(self):
        self.A = _matrix(600, 3000)

    def time_power_iteration(self):
        return power_iteration(self.A, 5)
