"""A client for a key-value service whose values are JSON documents."""

import json
import time
from concurrent.futures import ThreadPoolExecutor


class RemoteStore:
    """An in-process stand-in for the service: each ``get`` is one request that waits
    ``latency`` seconds for the round trip (waiting, not computing) before the stored bytes
    come back. ``latency=0`` is a co-located store."""

    def __init__(self, documents, latency=0.001):
        self._data = {k: json.dumps(v).encode() for k, v in documents.items()}
        self.latency = latency
        self.requests = 0

    def get(self, key):
        """The raw bytes stored under ``key`` (KeyError when absent)."""
        self.requests += 1
        if self.latency:
            time.sleep(self.latency)
        return self._data[key]


IN_FLIGHT = 2  # requests kept outstanding: the service rate-limits each client
_POOL = None


def _pool():
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=IN_FLIGHT, thread_name_prefix="kv-fetch")
    return _POOL


def fetch_all(store, keys):
    """The decoded documents of ``keys``, in order (KeyError for a missing key)."""
    keys = list(keys)
    if len(keys) < 2:
        return [json.loads(store.get(k)) for k in keys]
    # keep IN_FLIGHT requests outstanding and decode each reply while the next ones wait
    # on the network; map yields in key order and re-raises a request's error
    return [json.loads(raw) for raw in _pool().map(store.get, keys)]


def fetch_total(store, keys, field="value"):
    """Sum of ``field`` over the documents of ``keys``."""
    return sum(float(doc[field]) for doc in fetch_all(store, keys))
