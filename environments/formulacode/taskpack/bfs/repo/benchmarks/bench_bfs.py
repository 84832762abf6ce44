import random

from graphlite import bfs_distances, eccentricity


def _graph(n, degree):
    rng = random.Random(0)
    return [(i, rng.randrange(n)) for i in range(n) for _ in range(degree)]


class BFS:
    params = [[150, 300]]
    param_names = ["n"]

    def setup(self, n):
        self.edges = _graph(n, 3)

    def time_bfs(self, n):
        return bfs_distances(n, self.edges, 0)

    def time_eccentricity(self, n):
        return eccentricity(n, self.edges, 0)
