"""A client for a key-value service whose values are JSON documents."""

import json
import time


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


def fetch_all(store, keys):
    """The decoded documents of ``keys``, in order (KeyError for a missing key)."""
    return [json.loads(store.get(k)) for k in keys]


def fetch_total(store, keys, field="value"):
    """Sum of ``field`` over the documents of ``keys``."""
    return sum(float(doc[field]) for doc in fetch_all(store, keys))
