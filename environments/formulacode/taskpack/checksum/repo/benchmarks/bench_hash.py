import random

from rollhash import adler32, chunk_boundaries


def _data(n, kind):
    rng = random.Random(n)
    if kind == "text":
        words = [b"lorem", b"ipsum", b"dolor", b"sit", b"amet", b"consectetur"]
        return b" ".join(rng.choice(words) for _ in range(n // 6 + 1))[:n]
    return bytes(rng.randrange(256) for _ in range(n))


class Hash:
    params = [[64, 4_000, 40_000], ["random", "text"]]
    param_names = ["n", "kind"]
    warmup_time = 0.02

    def setup(self, n, kind):
        self.data = _data(n, kind)

    def time_adler32(self, n, kind):
        return adler32(self.data)

    def time_chunk_boundaries(self, n, kind):
        return chunk_boundaries(self.data)

    def time_chunk_boundaries_wide(self, n, kind):
        return chunk_boundaries(self.data, window=48, mask=0xFF)
