import numpy as np
from polyeval import polyval, polyval_derivative


class Poly:
    params = [[12, 24]]
    param_names = ["degree"]

    def setup(self, degree):
        rng = np.random.default_rng(0)
        self.coeffs = list(rng.normal(size=degree + 1) / np.arange(1, degree + 2))
        self.x = rng.uniform(-1, 1, size=20000)

    def time_polyval(self, degree):
        return polyval(self.coeffs, self.x)

    def time_derivative(self, degree):
        return polyval_derivative(self.coeffs, self.x)
