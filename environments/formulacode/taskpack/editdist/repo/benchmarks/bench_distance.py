import random

from strdist import levenshtein

ALPHABET = "acgt"


def _pair(length, kind, seed):
    rng = random.Random(seed)
    a = "".join(rng.choice(ALPHABET) for _ in range(length))
    if kind == "random":
        b = "".join(rng.choice(ALPHABET) for _ in range(length))
    elif kind == "longer":  # the second string is longer and unrelated
        b = "".join(rng.choice(ALPHABET) for _ in range(2 * length))
    else:  # 'edited': a copy with a few substitutions away from its ends
        chars = list(a)
        for _ in range(max(2, length // 8)):
            i = rng.randrange(length // 10, length - length // 10)
            chars[i] = rng.choice(ALPHABET)
        b = "".join(chars)
    return a, b


class Distance:
    params = [[24, 64, 160], ["random", "longer", "edited"]]
    param_names = ["length", "kind"]
    warmup_time = 0.02

    def setup(self, length, kind):
        self.pairs = [_pair(length, kind, s) for s in range(4)]

    def time_levenshtein(self, length, kind):
        return [levenshtein(a, b) for a, b in self.pairs]

    def time_levenshtein_swapped(self, length, kind):
        return [levenshtein(b, a) for a, b in self.pairs]
