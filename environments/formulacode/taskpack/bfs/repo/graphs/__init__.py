from graphs.core import bfs_distances, grid_graph, random_graph

__all__ = ["bfs_distances", "grid_graph", "random_graph"]
