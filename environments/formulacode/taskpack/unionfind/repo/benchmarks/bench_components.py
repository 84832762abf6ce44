import random

from clusterlite import component_sizes, connected_components


class Components:
    params = [[600, 1200]]
    param_names = ["n"]

    def setup(self, n):
        rng = random.Random(0)
        self.edges = [(rng.randrange(n), rng.randrange(n)) for _ in range(n // 2)]

    def time_components(self, n):
        return connected_components(n, self.edges)

    def time_sizes(self, n):
        return component_sizes(n, self.edges)
