import numpy as np
from segments import segment_max, segment_sums

_DATA: dict = {}


def _data(n_segments, mean_len):
    key = (n_segments, mean_len)
    if key not in _DATA:
        rng = np.random.default_rng(n_segments * 13 + mean_len)
        lengths = rng.integers(1, 2 * mean_len + 1, size=n_segments)
        _DATA[key] = (rng.standard_normal(int(lengths.sum())), lengths)
    return _DATA[key]


class Segments:
    params = [[4, 12, 40], [500, 5_000, 50_000]]
    param_names = ["n_segments", "mean_len"]
    warmup_time = 0.02

    def setup(self, n_segments, mean_len):
        self.values, self.lengths = _data(n_segments, mean_len)

    def time_segment_sums(self, n_segments, mean_len):
        return segment_sums(self.values, self.lengths)

    def time_segment_max(self, n_segments, mean_len):
        return segment_max(self.values, self.lengths)
