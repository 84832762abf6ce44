from graphs import bfs_distances, grid_graph, random_graph

_GRAPHS: dict = {}


def _graph(kind, size):
    key = (kind, size)
    if key not in _GRAPHS:
        if kind == "grid":
            side = int(size ** 0.5)
            _GRAPHS[key] = grid_graph(side, side)
        elif kind == "strip":
            _GRAPHS[key] = grid_graph(4, size // 4)
        else:
            _GRAPHS[key] = random_graph(size, 6, seed=size)
    return _GRAPHS[key]


class BFS:
    params = [["grid", "strip", "random"], [400, 4_000, 40_000]]
    param_names = ["kind", "nodes"]
    warmup_time = 0.02

    def setup(self, kind, nodes):
        self.adj = _graph(kind, nodes)

    def time_bfs_distances(self, kind, nodes):
        return bfs_distances(self.adj, 0)

    def time_bfs_from_middle(self, kind, nodes):
        return bfs_distances(self.adj, len(self.adj) // 2)
