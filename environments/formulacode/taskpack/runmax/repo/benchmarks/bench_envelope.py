import random

from runmax import envelope_width, sliding_max


class SlidingMax:
    params = [[100, 200]]
    param_names = ["window"]

    def setup(self, window):
        rng = random.Random(0)
        self.x = [rng.random() for _ in range(3000)]

    def time_sliding_max(self, window):
        return sliding_max(self.x, window)


class Envelope:
    params = [[100]]
    param_names = ["window"]

    def setup(self, window):
        rng = random.Random(1)
        self.x = [rng.random() for _ in range(2000)]

    def time_envelope(self, window):
        return envelope_width(self.x, window)
