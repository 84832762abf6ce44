import numpy as np
from filterkit import fir_filter, smooth


class FIR:
    params = [[8, 16]]
    param_names = ["taps"]

    def setup(self, taps):
        rng = np.random.default_rng(0)
        self.signal = rng.normal(size=1500)
        self.taps = rng.normal(size=taps)

    def time_fir(self, taps):
        return fir_filter(self.signal, self.taps)


class Smooth:
    def setup(self):
        self.signal = np.random.default_rng(1).normal(size=1500)

    def time_smooth(self):
        return smooth(self.signal, 9)
