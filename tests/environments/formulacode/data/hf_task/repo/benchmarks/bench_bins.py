import numpy as np
from binstat import bin_counts, bin_means

_DATA: dict = {}


def _data(n, n_bins):
    key = (n, n_bins)
    if key not in _DATA:
        rng = np.random.default_rng(n + n_bins)
        # uniform over the edges' span: every bin gets values, so no mean is NaN (the
        # snapshot gate, like snapshot-tester, counts NaN != NaN)
        values = rng.uniform(-3.2, 3.2, n)
        _DATA[key] = (values, rng.random(n), np.linspace(-3.0, 3.0, n_bins + 1))
    return _DATA[key]


class Bins:
    params = [[500, 5_000], [8, 64]]
    param_names = ["n", "n_bins"]
    warmup_time = 0.02

    def setup(self, n, n_bins):
        self.values, self.weights, self.edges = _data(n, n_bins)

    def time_bin_counts(self, n, n_bins):
        return bin_counts(self.values, self.edges)

    def time_bin_means(self, n, n_bins):
        return bin_means(self.values, self.weights, self.edges)
