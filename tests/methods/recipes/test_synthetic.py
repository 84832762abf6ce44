"""The synthetic training streams: seeded, the stated format, and no positional shortcut."""

from __future__ import annotations

import pytest

from methods.recipes.synthetic import ALPHABET, SEPARATOR, induction_stream


def test_induction_stream_repeats_each_string_once_after_a_newline() -> None:
    text = induction_stream(5000, seed=3, min_length=4, max_length=12)
    assert len(text) == 5000
    lines = text.split(SEPARATOR)[:-1]  # the last line may be cut by the byte budget
    assert len(lines) >= 4
    pairs = list(zip(lines[0::2], lines[1::2], strict=False))
    assert all(first == second for first, second in pairs)
    assert all(set(first) <= set(ALPHABET) and 4 <= len(first) <= 12 for first, _ in pairs)
    # lengths vary, so copying by a fixed offset cannot predict the second copy
    assert len({len(first) for first, _ in pairs}) > 3


def test_induction_stream_is_seeded() -> None:
    assert induction_stream(2000, seed=1) == induction_stream(2000, seed=1)
    assert induction_stream(2000, seed=1) != induction_stream(2000, seed=2)
    assert induction_stream(500, seed=1) == induction_stream(2000, seed=1)[:500]


def test_induction_stream_rejects_bad_lengths() -> None:
    with pytest.raises(ValueError, match="min_length"):
        induction_stream(100, seed=0, min_length=0)
    with pytest.raises(ValueError, match="min_length"):
        induction_stream(100, seed=0, min_length=9, max_length=8)
