import random

from textdist import closest, edit_distance


def _word(rng, n):
    return "".join(rng.choice("acgt") for _ in range(n))


class Distance:
    params = [[40, 60]]
    param_names = ["length"]

    def setup(self, length):
        rng = random.Random(0)
        self.a, self.b = _word(rng, length), _word(rng, length)

    def time_distance(self, length):
        return edit_distance(self.a, self.b)


class Closest:
    def setup(self):
        rng = random.Random(1)
        self.word = _word(rng, 25)
        self.vocab = [_word(rng, 25) for _ in range(10)]

    def time_closest(self):
        return closest(self.word, self.vocab)
