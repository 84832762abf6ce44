"""The needle generator: seeded items whose key sits once in the filler and whose prompt
ends with the needle's cue; items fit a 256-byte window."""

from __future__ import annotations

import pytest

from environments.probes.needle import CUE, digit_accuracy, make_items
from environments.probes.passkey import FILLER


def test_items_are_seeded_and_consistent() -> None:
    items = make_items(40, seed=3)
    assert items == make_items(40, seed=3) and items != make_items(40, seed=4)
    depths = set()
    for item in items:
        body, cue = item.prompt.rsplit("\n", 1)
        assert cue == CUE and len(item.target) == 4 and item.target.isdigit()
        assert body.count(CUE) == 1 and f"{CUE}{item.target}." in body
        sentences = [s.strip() + "." for s in body.split(".") if s.strip()]
        assert len(sentences) == item.n_filler + 1
        assert sorted(s in FILLER for s in sentences) == [False] + [True] * item.n_filler
        assert len(item.prompt.encode()) < 256
        depths.add(item.depth)
    assert len(depths) > 3  # the needle moves
    with pytest.raises(ValueError):
        make_items(1, digits=0)


def test_digit_accuracy() -> None:
    assert digit_accuracy("2690.", "2690") == 1.0
    assert digit_accuracy(" 2600", "2690") == 0.75
    assert digit_accuracy("", "2690") == 0.0
