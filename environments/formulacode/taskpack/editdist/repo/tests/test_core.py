import random

from strdist import levenshtein


def test_known_distances():
    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("", "abc") == 3 and levenshtein("abc", "") == 3
    assert levenshtein("flaw", "lawn") == 2 and levenshtein("same", "same") == 0


def test_symmetric_and_affix_invariant():
    rng = random.Random(0)
    for _ in range(50):
        a = "".join(rng.choice("ab") for _ in range(rng.randrange(8)))
        b = "".join(rng.choice("ab") for _ in range(rng.randrange(8)))
        assert levenshtein(a, b) == levenshtein(b, a) == levenshtein("x" + a + "y", "x" + b + "y")
