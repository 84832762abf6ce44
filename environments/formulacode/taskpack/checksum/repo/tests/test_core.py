import random
import zlib

from rollhash import adler32, chunk_boundaries


def test_adler_matches_zlib():
    rng = random.Random(1)
    for n in (0, 1, 100, 5552, 5553, 20000):
        data = bytes(rng.randrange(256) for _ in range(n))
        assert adler32(data) == zlib.adler32(data)


def test_chunk_boundaries_match_naive():
    rng = random.Random(2)
    data = bytes(rng.randrange(256) for _ in range(3000))
    w, mask = 16, 0x3F
    naive = [i + 1 for i in range(w - 1, len(data)) if sum(data[i - w + 1:i + 1]) & mask == 0]
    assert chunk_boundaries(data, w, mask) == naive
    assert chunk_boundaries(b"", 4) == [] and chunk_boundaries(b"\0\0\0", 4) == []
