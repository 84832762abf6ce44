import numpy as np
from growbuf import Recorder

_DATA: dict = {}


def _chunks(n_chunks, size):
    key = (n_chunks, size)
    if key not in _DATA:
        rng = np.random.default_rng(n_chunks + size)
        _DATA[key] = [rng.standard_normal(size) for _ in range(n_chunks)]
    return _DATA[key]


class Record:
    params = [[8, 24, 64], [64, 1_000, 4_000]]
    param_names = ["n_chunks", "chunk"]
    warmup_time = 0.02

    def setup(self, n_chunks, chunk):
        self.chunks = _chunks(n_chunks, chunk)

    def time_record(self, n_chunks, chunk):
        rec = Recorder()
        for c in self.chunks:
            rec.extend(c)
        return rec.data

    def time_record_and_poll(self, n_chunks, chunk):
        rec = Recorder()
        means = []
        for c in self.chunks:
            rec.extend(c)
            means.append(rec.data[-1])
        return means, rec.mean()
