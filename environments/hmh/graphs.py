"""Heterophilous degree-corrected stochastic block models with hubs, for node classification.

``k`` balanced classes; an edge joins two nodes of the same class with probability
proportional to ``homophily`` and of different classes with probability proportional to
``1 - homophily`` (so ``homophily`` is the expected fraction of intra-class edges: 0.1 is
strongly heterophilous). Degrees are corrected by Pareto(``tail``) node weights, so a few
hubs carry many edges. Edges are drawn as in Karrer and Newman's DC-SBM sampler (a Poisson
count per block pair, endpoints in proportion to the weights), in O(edges), then made simple
and undirected. Node features are a class mean (a random direction of norm ``signal``) plus
unit Gaussian noise, weak enough that the graph has to help. The split is random:
``train`` / ``val`` / rest is test.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class NodeGraph:
    """An undirected simple graph (``edges``: each pair once, ``i < j``) with node data."""

    n: int
    edges: IntArray
    x: Array
    y: IntArray
    train: IntArray
    val: IntArray
    test: IntArray
    k: int

    def degrees(self) -> IntArray:
        return np.bincount(self.edges.ravel(), minlength=self.n).astype(np.int64)


def edge_homophily(edges: IntArray, y: IntArray) -> float:
    """Fraction of edges whose two ends share a label."""
    return float(np.mean(y[edges[:, 0]] == y[edges[:, 1]])) if len(edges) else float("nan")


def make_sbm(n: int = 1000, k: int = 4, avg_degree: float = 10.0, homophily: float = 0.1,
             tail: float = 1.5, dim: int = 16, signal: float = 1.0,
             train_frac: float = 0.3, val_frac: float = 0.2, seed: int = 0) -> NodeGraph:
    """A seeded heterophilous DC-SBM graph with hubs, features, labels and a split."""
    if not 0 <= homophily <= 1 or k < 2 or n < 2 * k:
        raise ValueError("need 0 <= homophily <= 1, k >= 2 and n >= 2k")
    rng = np.random.default_rng(seed)
    y = rng.permutation(np.arange(n) % k).astype(np.int64)
    weight = rng.pareto(tail, size=n) + 1.0
    weight = np.minimum(weight, np.sqrt(n) * 2.0)  # a hub reaches at most ~2 sqrt(n)
    members = [np.flatnonzero(y == c) for c in range(k)]
    total_edges = avg_degree * n / 2.0
    # expected edge counts per block pair: homophily of them inside classes
    counts = np.full((k, k), (1 - homophily) * total_edges / (k * (k - 1) / 2))
    np.fill_diagonal(counts, homophily * total_edges / k)
    parts: list[IntArray] = []
    for a in range(k):
        pa = weight[members[a]] / weight[members[a]].sum()
        for b in range(a, k):
            m = rng.poisson(counts[a, b] if a != b else counts[a, a])
            pb = weight[members[b]] / weight[members[b]].sum()
            src = rng.choice(members[a], size=m, p=pa)
            dst = rng.choice(members[b], size=m, p=pb)
            parts.append(np.column_stack([src, dst]))
    edges = np.concatenate(parts)
    edges = edges[edges[:, 0] != edges[:, 1]]
    edges = np.unique(np.sort(edges, axis=1), axis=0).astype(np.int64)
    means = rng.normal(size=(k, dim))
    means *= signal / np.linalg.norm(means, axis=1, keepdims=True)
    x = means[y] + rng.normal(size=(n, dim))
    order = rng.permutation(n)
    n_train, n_val = int(round(train_frac * n)), int(round(val_frac * n))
    return NodeGraph(n=n, edges=edges, x=x, y=y, train=np.sort(order[:n_train]),
                     val=np.sort(order[n_train:n_train + n_val]),
                     test=np.sort(order[n_train + n_val:]), k=k)
