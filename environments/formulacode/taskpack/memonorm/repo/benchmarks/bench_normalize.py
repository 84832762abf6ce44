import random

from textnorm import Normalizer

_WORDS = ["Café", "naïve", "RÉSUMÉ", "coöperate", "Zürich", "soooo", "e-mail!", "Ångström",
          "fiancée", "déjà-vu", "Straße", "piñata", "niño", "crème", "brûlée", "façade"]


def _stream(n, vocab, seed):
    rng = random.Random(seed)
    if vocab == "unique":
        return [f"{_WORDS[i % len(_WORDS)]}{i}" for i in range(n)]
    size = {"zipf": max(8, n // 2), "heavy": max(8, n // 8)}[vocab]
    words = [f"{_WORDS[i % len(_WORDS)]}{i // len(_WORDS)}" for i in range(size)]
    weights = [1.0 / (r + 1) for r in range(size)]
    return rng.choices(words, weights, k=n)


class Normalize:
    params = [[20, 400, 4_000], ["unique", "zipf", "heavy"]]
    param_names = ["n_tokens", "vocab"]
    warmup_time = 0.02

    def setup(self, n_tokens, vocab):
        self.tokens = _stream(n_tokens, vocab, n_tokens)

    def time_normalize_stream(self, n_tokens, vocab):
        return Normalizer().normalize_all(self.tokens)

    def time_term_counts(self, n_tokens, vocab):
        return Normalizer().term_counts(self.tokens)
