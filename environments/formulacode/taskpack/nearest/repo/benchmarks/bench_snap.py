import numpy as np
from nearest import snap_to_grid


class Snap:
    params = [[200, 400]]
    param_names = ["grid_size"]

    def setup(self, grid_size):
        rng = np.random.default_rng(0)
        self.grid = rng.uniform(0, 100, size=grid_size)
        self.queries = rng.uniform(0, 100, size=100)

    def time_snap(self, grid_size):
        return snap_to_grid(self.grid, self.queries)
