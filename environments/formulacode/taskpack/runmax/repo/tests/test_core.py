import random

from runmax import envelope_width, sliding_max


def test_sliding_max():
    assert sliding_max([1, 3, 2, 5, 4, 1], 2) == [3, 3, 5, 5, 4]
    assert sliding_max([2, 2, 2], 3) == [2]


def test_random_against_naive():
    rng = random.Random(5)
    x = [rng.randrange(10) for _ in range(60)]
    assert sliding_max(x, 7) == [max(x[i:i + 7]) for i in range(54)]
    assert envelope_width([0, 1, 0, 1], 2) == 3
