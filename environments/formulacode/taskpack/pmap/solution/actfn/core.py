"""Elementwise activation functions over float64 arrays."""

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np


def _gelu(x):
    return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


def _softplus(x):
    return np.logaddexp(0.0, x)


def _swish(x):
    return x / (1.0 + np.exp(-x))


def _mish(x):
    return x * np.tanh(np.logaddexp(0.0, x))


KINDS = {"gelu": _gelu, "softplus": _softplus, "swish": _swish, "mish": _mish}

# numpy's ufunc loops release the GIL, so contiguous chunks run truly in parallel; below
# this size handing chunks to the pool (waking an idle CPU) costs more than it saves
_MIN_PARALLEL = 100_000
_POOL = None


def _workers():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _pool():
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=_workers())
    return _POOL


def apply(x, kind):
    """The activation ``kind`` applied to every element of ``x`` (a new float64 array)."""
    x = np.asarray(x, dtype=np.float64)
    func = KINDS[kind]
    workers = _workers()
    if workers < 2 or x.size < _MIN_PARALLEL:
        return func(x)
    flat = np.ascontiguousarray(x).reshape(-1)
    out = np.empty_like(flat)
    edges = np.linspace(0, flat.size, workers + 1).astype(int)

    def chunk(i):
        lo, hi = edges[i], edges[i + 1]
        out[lo:hi] = func(flat[lo:hi])

    list(_pool().map(chunk, range(workers)))
    return out.reshape(x.shape)
