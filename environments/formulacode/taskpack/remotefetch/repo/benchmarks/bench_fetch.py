import numpy as np
from kvclient import RemoteStore, fetch_all, fetch_total

_DOCS: dict = {}


def _documents(n_keys, size):
    key = (n_keys, size)
    if key not in _DOCS:
        rng = np.random.default_rng(n_keys * 31 + len(size))
        width = {"small": 4, "large": 400}[size]
        _DOCS[key] = {f"k{i:04d}": {"value": float(rng.random()),
                                    "samples": np.round(rng.random(width), 4).tolist()}
                      for i in range(n_keys)}
    return _DOCS[key]


class Fetch:
    params = [[2, 8, 32], [0.0002, 0.001], ["small", "large"]]
    param_names = ["n_keys", "latency", "size"]
    warmup_time = 0.02

    def setup(self, n_keys, latency, size):
        docs = _documents(n_keys, size)
        self.store = RemoteStore(docs, latency)
        self.keys = sorted(docs)

    def time_fetch_all(self, n_keys, latency, size):
        return fetch_all(self.store, self.keys)


class Total:
    # latency 0: a co-located store, where there is no round trip to hide
    params = [[4, 16], [0.0, 0.001]]
    param_names = ["n_keys", "latency"]
    warmup_time = 0.02

    def setup(self, n_keys, latency):
        docs = _documents(n_keys, "small")
        self.store = RemoteStore(docs, latency)
        self.keys = sorted(docs)

    def time_fetch_total(self, n_keys, latency):
        return fetch_total(self.store, self.keys)
