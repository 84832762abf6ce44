import numpy as np
from qstats import Sample

_DATA: dict = {}


def _values(n):
    if n not in _DATA:
        _DATA[n] = np.random.default_rng(n).lognormal(size=n)
    return _DATA[n]


class Queries:
    params = [[1_000, 20_000, 200_000], [1, 2, 5]]
    param_names = ["n", "n_queries"]
    warmup_time = 0.02

    def setup(self, n, n_queries):
        self.values = _values(n)
        self.qs = np.linspace(0.01, 0.99, n_queries)

    def time_quantiles(self, n, n_queries):
        s = Sample(self.values)
        return [s.quantile(q) for q in self.qs]

    def time_fraction_below(self, n, n_queries):
        s = Sample(self.values)
        return [s.fraction_below(x) for x in self.qs * 3]

    def time_summary(self, n, n_queries):
        s = Sample(self.values)
        return ([s.quantile(q) for q in self.qs], [s.fraction_below(x) for x in self.qs * 3])
