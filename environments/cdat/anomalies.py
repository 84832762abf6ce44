"""An attributed community graph with anomalies injected the usual way (Ding et al.,
DOMINANT, SDM 2019).

The clean graph is a homophilous SBM (``k`` communities; an edge stays inside a community
with probability ``homophily``) whose node features are the community's mean direction
(norm ``signal``) plus unit Gaussian noise. Then:

* **structural anomalies**: ``n_cliques`` groups of ``clique_size`` random nodes are joined
  into cliques (dense links between nodes of unrelated communities);
* **contextual anomalies**: as many other nodes get the features of the farthest (in
  Euclidean distance) of ``candidates`` random nodes, so their attributes do not fit their
  neighbourhood.

``label`` is 1 for an injected node; ``kind`` is 0 clean, 1 structural, 2 contextual.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class AnomalyGraph:
    n: int
    edges: IntArray
    x: Array
    label: IntArray
    kind: IntArray
    community: IntArray


def make_anomaly_graph(n: int = 1000, k: int = 5, avg_degree: float = 8.0,
                       homophily: float = 0.9, dim: int = 16, signal: float = 2.0,
                       n_cliques: int = 3, clique_size: int = 10, candidates: int = 50,
                       seed: int = 0) -> AnomalyGraph:
    """A seeded community graph with ``2 * n_cliques * clique_size`` injected anomalies."""
    n_anom = 2 * n_cliques * clique_size
    if n < 4 * n_anom or k < 2:
        raise ValueError("need n >= 4 x the anomalies and k >= 2")
    rng = np.random.default_rng(seed)
    community = rng.permutation(np.arange(n) % k).astype(np.int64)
    m = rng.poisson(avg_degree * n / 2)
    src = rng.integers(0, n, size=m)
    inside = rng.random(m) < homophily
    members = [np.flatnonzero(community == c) for c in range(k)]
    dst = rng.integers(0, n, size=m)
    for c in range(k):  # intra-community edges: redraw the far end inside the community
        pick = inside & (community[src] == c)
        dst[pick] = rng.choice(members[c], size=int(pick.sum()))
    means = rng.normal(size=(k, dim))
    means *= signal / np.linalg.norm(means, axis=1, keepdims=True)
    x = means[community] + rng.normal(size=(n, dim))
    chosen = rng.choice(n, size=n_anom, replace=False)
    structural, contextual = chosen[: n_anom // 2], chosen[n_anom // 2:]
    extra = []
    for group in structural.reshape(n_cliques, clique_size):
        i, j = np.triu_indices(clique_size, 1)
        extra.append(np.column_stack([group[i], group[j]]))
    x_new = x.copy()
    for node in contextual:
        pool = rng.choice(n, size=candidates, replace=False)
        far = pool[np.argmax(np.linalg.norm(x[pool] - x[node], axis=1))]
        x_new[node] = x[far]
    edges = np.concatenate([np.column_stack([src, dst]), *extra])
    edges = edges[edges[:, 0] != edges[:, 1]]
    edges = np.unique(np.sort(edges, axis=1), axis=0).astype(np.int64)
    kind = np.zeros(n, dtype=np.int64)
    kind[structural], kind[contextual] = 1, 2
    return AnomalyGraph(n=n, edges=edges, x=x_new, label=(kind > 0).astype(np.int64),
                        kind=kind, community=community)
