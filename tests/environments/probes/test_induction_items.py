"""The induction generator: seeded items whose target is what followed the cue."""

from __future__ import annotations

import pytest

from environments.probes.induction import ALPHABET, SEPARATOR, copy_accuracy, make_items


def test_items_are_seeded_and_consistent() -> None:
    items = make_items(20, seed=3)
    assert items == make_items(20, seed=3) and items != make_items(20, seed=4)
    for item in items:
        letters, cue = item.prompt.split(SEPARATOR)
        assert len(letters) == 24 and set(letters) <= set(ALPHABET)
        assert cue == letters[:8] and item.target == letters[8:16]
    with pytest.raises(ValueError):
        make_items(1, length=8, prefix=4, answer=5)


def test_copy_accuracy() -> None:
    assert copy_accuracy("abcd", "abcd") == 1.0
    assert copy_accuracy("  abxd and more", "abcd") == 0.75
    assert copy_accuracy("", "abcd") == 0.0
    assert copy_accuracy("ab", "abcd") == 0.5
