"""The anomaly graph: seeded, anomalies injected as specified."""

from __future__ import annotations

import numpy as np

from environments.cdat import make_anomaly_graph


def test_seeded_and_anomalies_counted() -> None:
    a, b = make_anomaly_graph(400, n_cliques=2, clique_size=5, seed=3), make_anomaly_graph(
        400, n_cliques=2, clique_size=5, seed=3)
    assert np.array_equal(a.edges, b.edges) and np.array_equal(a.x, b.x)
    assert (a.kind == 1).sum() == 10 and (a.kind == 2).sum() == 10
    assert np.array_equal(a.label, (a.kind > 0).astype(int))


def test_cliques_are_complete_and_contextual_features_are_copied() -> None:
    g = make_anomaly_graph(400, n_cliques=1, clique_size=6, seed=0)
    members = set(np.flatnonzero(g.kind == 1).tolist())
    edges = {tuple(e) for e in g.edges.tolist()}
    assert all((i, j) in edges for i in members for j in members if i < j)
    for node in np.flatnonzero(g.kind == 2):  # the features equal some other node's
        assert (np.abs(g.x - g.x[node]).sum(axis=1) < 1e-12).sum() >= 2
