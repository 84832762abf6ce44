"""Categorical tables: every column an integer code ``0 .. cards[j] - 1``, the last column
the label a classifier predicts.

* ``parity``: ``d`` uniform bits and a label equal to the XOR of the first ``order`` bits,
  flipped with probability ``noise``. Every marginal of fewer than ``order + 1`` columns is
  uniform, so the structure lives only in the ``order + 1``-way marginal (the high-order
  correlation Tab-PE targets) and independent marginals carry none of it.
* ``fair``: statsmodels' shipped extramarital-affairs survey (Fair 1978; 6,366 rows), each
  column cut into at most 3 quantile bins and the label ``affairs > 0``; ``n`` rows are drawn
  from it without replacement (a seeded subsample).

``make_table`` also returns a disjoint holdout of the same source, for classifier utility.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class Table:
    data: IntArray
    holdout: IntArray
    cards: tuple[int, ...]
    name: str


def parity_table(n: int, d: int = 7, order: int = 3, noise: float = 0.05,
                 seed: int = 0) -> IntArray:
    """``n`` rows of ``d`` uniform bits plus the noisy XOR of the first ``order``."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2, size=(n, d))
    label = bits[:, :order].sum(axis=1) % 2
    label ^= (rng.random(n) < noise).astype(np.int64)
    return np.column_stack([bits, label]).astype(np.int64)


def _bin(column: NDArray[np.float64], levels: int = 3) -> IntArray:
    values = np.unique(column)
    if len(values) <= levels:
        return np.searchsorted(values, column).astype(np.int64)
    cuts = np.unique(np.quantile(column, np.linspace(0, 1, levels + 1)[1:-1]))
    return np.searchsorted(cuts, column, side="right").astype(np.int64)


def fair_table() -> IntArray:
    """statsmodels' ``fair`` data, binned (needs statsmodels, a base dependency)."""
    from statsmodels.datasets import fair

    frame = fair.load_pandas().data
    label = (frame["affairs"].to_numpy() > 0).astype(np.int64)
    features = [_bin(frame[c].to_numpy(dtype=float)) for c in frame.columns if c != "affairs"]
    return np.column_stack([*features, label]).astype(np.int64)


def make_table(name: str = "parity", n: int = 2000, n_holdout: int = 1000,
               seed: int = 0) -> Table:
    """A seeded table (``parity`` or ``fair``) of ``n`` rows and a disjoint holdout."""
    if name == "parity":
        full = parity_table(n + n_holdout, seed=seed)
    elif name == "fair":
        source = fair_table()
        if n + n_holdout > len(source):
            raise ValueError(f"fair has {len(source)} rows; asked for {n + n_holdout}")
        full = source[np.random.default_rng(seed).permutation(len(source))[:n + n_holdout]]
    else:
        raise ValueError(f"unknown table {name!r}: parity or fair")
    cards = tuple(int(c) for c in full.max(axis=0) + 1)
    return Table(data=full[:n], holdout=full[n:], cards=cards, name=name)
