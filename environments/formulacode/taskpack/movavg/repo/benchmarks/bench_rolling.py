import numpy as np
from movavg import detrend, rolling_mean


class Rolling:
    params = [[20, 60]]
    param_names = ["window"]

    def setup(self, window):
        self.x = np.random.default_rng(0).normal(size=400)

    def time_rolling_mean(self, window):
        return rolling_mean(self.x, window)

    def time_detrend(self, window):
        return detrend(self.x, window)
