"""Sharded float64 arrays on disk (optionally zlib-compressed) and a summary over them."""

import os
import zlib
from concurrent.futures import ThreadPoolExecutor

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


_POOL = None


def _pool():
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="shard-prefetch")
    return _POOL


def shard_summary(paths):
    """Per shard: (length, sum, 1% / 50% / 99% quantiles), in path order."""
    paths = list(paths)
    if len(paths) < 2 or not all(p.endswith(".z") for p in paths):
        # an uncompressed shard is one read from the page cache: nothing to hide
        return [_summarise(_load(p)) for p in paths]
    # read and decompress the next shard in the background while this one is summarised
    # (file reads and zlib both release the GIL)
    out = []
    pending = _pool().submit(_load, paths[0])
    for nxt in paths[1:]:
        current = pending.result()
        pending = _pool().submit(_load, nxt)
        out.append(_summarise(current))
    out.append(_summarise(pending.result()))
    return out
