import numpy as np
from interplite import linear_interp, resample


class Interp:
    params = [[5000, 10000]]
    param_names = ["queries"]

    def setup(self, queries):
        rng = np.random.default_rng(0)
        self.xp = np.sort(rng.uniform(0, 10, size=500))
        self.fp = np.sin(self.xp)
        self.x = rng.uniform(-1, 11, size=queries)

    def time_interp(self, queries):
        return linear_interp(self.xp, self.fp, self.x)


class Resample:
    def setup(self):
        self.t = np.linspace(0, 1, 300) ** 2
        self.y = np.cos(self.t * 7)

    def time_resample(self):
        return resample(self.t, self.y, 8000)
