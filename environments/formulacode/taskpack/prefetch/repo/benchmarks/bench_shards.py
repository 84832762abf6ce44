import shutil
import tempfile

import numpy as np
from shardio import shard_summary, write_shards

_DATA: dict = {}


def _arrays(n_shards, length):
    key = (n_shards, length)
    if key not in _DATA:
        rng = np.random.default_rng(n_shards * 7 + length)
        # rounded values compress like real sensor data
        _DATA[key] = [np.round(rng.standard_normal(length), 2) for _ in range(n_shards)]
    return _DATA[key]


class Summary:
    params = [[4, 8, 16], [100_000, 400_000], ["zlib", "raw"]]
    param_names = ["n_shards", "length", "storage"]
    warmup_time = 0.02

    def setup(self, n_shards, length, storage):
        self.dir = tempfile.mkdtemp(prefix="fc-shards-")
        self.paths = write_shards(self.dir, _arrays(n_shards, length), storage == "zlib")

    def teardown(self, n_shards, length, storage):
        shutil.rmtree(self.dir, ignore_errors=True)

    def time_shard_summary(self, n_shards, length, storage):
        return shard_summary(self.paths)
