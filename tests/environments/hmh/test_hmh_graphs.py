"""The heterophilous DC-SBM: seeded, heterophilous as asked, with hubs, a clean split."""

from __future__ import annotations

import numpy as np

from environments.hmh import edge_homophily, make_sbm


def test_graph_is_seeded_simple_and_undirected() -> None:
    a, b = make_sbm(300, seed=4), make_sbm(300, seed=4)
    assert np.array_equal(a.edges, b.edges) and np.array_equal(a.x, b.x)
    assert not np.array_equal(a.edges, make_sbm(300, seed=5).edges)
    assert (a.edges[:, 0] < a.edges[:, 1]).all()
    assert len(np.unique(a.edges, axis=0)) == len(a.edges)


def test_homophily_and_hubs() -> None:
    g = make_sbm(2000, homophily=0.1, seed=0)
    assert abs(edge_homophily(g.edges, g.y) - 0.1) < 0.03
    deg = g.degrees()
    assert deg.max() > 10 * np.median(deg)  # hubs
    assert abs(edge_homophily(make_sbm(2000, homophily=0.8, seed=0).edges, g.y) - 0.8) < 0.05


def test_split_partitions_the_nodes() -> None:
    g = make_sbm(500, seed=1)
    nodes = np.concatenate([g.train, g.val, g.test])
    assert sorted(nodes.tolist()) == list(range(500))
    assert len(g.train) == 150 and len(g.val) == 100
