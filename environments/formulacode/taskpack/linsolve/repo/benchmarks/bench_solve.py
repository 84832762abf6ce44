import numpy as np
from linsolve import solve_many


class SolveMany:
    params = [[30, 60], [50]]
    param_names = ["n", "rhs"]

    def setup(self, n, rhs):
        rng = np.random.default_rng(0)
        self.A = rng.normal(size=(n, n)) + n * np.eye(n)
        self.B = rng.normal(size=(n, rhs))

    def time_solve_many(self, n, rhs):
        return solve_many(self.A, self.B)
