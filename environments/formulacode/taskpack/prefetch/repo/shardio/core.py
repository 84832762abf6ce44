"""Sharded float64 arrays on disk (optionally zlib-compressed) and a summary over them."""

import os
import zlib

import numpy as np

QUANTILES = (0.01, 0.5, 0.99)


def write_shards(directory, arrays, compress=True):
    """Write each array as one shard file; returns the paths in order."""
    paths = []
    for i, arr in enumerate(arrays):
        raw = np.ascontiguousarray(arr, dtype=np.float64).tobytes()
        path = os.path.join(directory, f"shard{i:05d}.{'z' if compress else 'raw'}")
        with open(path, "wb") as f:
            f.write(zlib.compress(raw, 1) if compress else raw)
        paths.append(path)
    return paths


def _load(path):
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".z"):
        data = zlib.decompress(data)
    return np.frombuffer(data, dtype=np.float64)


def _summarise(x):
    q = np.quantile(x, QUANTILES)
    return (len(x), float(x.sum()), *map(float, q))


def shard_summary(paths):
    """Per shard: (length, sum, 1% / 50% / 99% quantiles), in path order."""
    return [_summarise(_load(p)) for p in paths]
