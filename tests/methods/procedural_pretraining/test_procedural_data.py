"""The procedural-data generators: Dyck words are balanced and of the asked length, copy and sort
records are right, streams fill their budget exactly and are the seed's."""

from __future__ import annotations

import random

import pytest

from methods.procedural_pretraining.procedural_data import (
    ALPHABET,
    CLOSE,
    OPEN,
    copy,
    dyck,
    is_balanced,
    record,
    sort,
    stream,
)


@pytest.mark.parametrize("k", [1, 2, 16, 64])
def test_dyck_words_are_balanced_and_use_k_types(k: int) -> None:
    rng = random.Random(0)
    seen: set[int] = set()
    for length in (2, 10, 256, 1000):
        word = dyck(k, length, rng)
        assert len(word) == length and is_balanced(word, k)
        seen |= set(word)
    # exactly the k opening and k closing bytes, every one of them used
    assert seen == set(range(OPEN, OPEN + k)) | set(range(CLOSE, CLOSE + k))


def test_dyck_nests_and_closes_in_the_right_order() -> None:
    word = dyck(64, 2000, random.Random(1))
    depth, deepest = 0, 0
    for byte in word:
        depth += 1 if byte < CLOSE else -1
        deepest = max(deepest, depth)
        assert depth >= 0
    assert depth == 0 and deepest >= 5  # p_open 0.49: a random walk, not a flat ()()()
    assert not is_balanced(word[:-1], 64)  # a cut word is not balanced
    swapped = bytes([OPEN, OPEN + 1, CLOSE, CLOSE + 1])  # ( [ ) ]
    assert not is_balanced(swapped, 2) and is_balanced(bytes([OPEN, OPEN + 1, CLOSE + 1,
                                                                 CLOSE]), 2)
    assert not is_balanced(b"ab", 2)


def test_dyck_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError):
        dyck(65, 10, random.Random(0))
    with pytest.raises(ValueError):
        dyck(2, 7, random.Random(0))


def test_copy_and_sort_records() -> None:
    rng = random.Random(2)
    for _ in range(20):
        c = copy(63, rng)
        assert len(c) == 128 and c.endswith(b"\n")
        x, y = c[:-1].split(b"|")
        assert x == y and len(x) == 63 and set(x) <= set(ALPHABET)
        s = sort(63, rng)
        x, y = s[:-1].split(b"|")
        assert len(s) == 128 and y == bytes(sorted(x)) and list(y) == sorted(y)
    with pytest.raises(ValueError):
        record("nope", rng)


@pytest.mark.parametrize("kind", ["dyck", "copy", "sort"])
def test_stream_fills_the_budget_and_is_the_seeds(kind: str) -> None:
    a = stream(kind, 1000, seed=7)
    assert len(a) == 1000 and stream(kind, 1000, seed=7) == a
    assert stream(kind, 1000, seed=8) != a
    assert stream(kind, 300, seed=7) == a[:300]  # a budget cuts the same stream
    assert stream(kind, 0, seed=7) == b""


def test_streams_concatenate_whole_records() -> None:
    d = stream("dyck", 512, seed=3, k=8, length=256)
    assert is_balanced(d[:256], 8) and is_balanced(d[256:], 8)
    c = stream("copy", 256, seed=3)
    first, second = c[:128], c[128:]
    for rec in (first, second):
        x, y = rec[:-1].split(b"|")
        assert x == y
