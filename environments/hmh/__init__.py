"""Seeded heterophilous degree-corrected SBM graphs with hubs (HMH paper's setting).

No Inspect imports: the graph generator, its node features, labels and splits.
"""

from environments.hmh.graphs import NodeGraph, edge_homophily, make_sbm

__all__ = ["NodeGraph", "edge_homophily", "make_sbm"]
