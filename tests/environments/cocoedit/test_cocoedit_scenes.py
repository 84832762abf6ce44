"""Recolouring scenes: seeded, the ideal edit changes exactly the region, leaks tint the rest."""

from __future__ import annotations

import numpy as np

from environments.cocoedit import PALETTE, leaky_targets, make_edit_set


def test_seeded_and_shaped() -> None:
    a, b = make_edit_set(20, seed=3), make_edit_set(20, seed=3)
    assert np.array_equal(a.source, b.source) and a.source.shape == (20, 3, 12, 12)
    assert not np.array_equal(a.source, make_edit_set(20, seed=4).source)
    assert a.instruction.shape == (20, 2 + len(PALETTE))
    assert np.all(a.instruction.sum(axis=1) == 2) and np.all(a.mask.sum(axis=(1, 2)) >= 4)


def test_ideal_edit_changes_the_region_only() -> None:
    e = make_edit_set(50, seed=1, distractor=True)
    changed = np.abs(e.target - e.source).max(axis=1) > 1e-9
    assert np.all(changed <= (e.mask > 0))  # nothing outside the region moves
    inside = (e.target * e.mask[:, None]).sum(axis=(2, 3)) / e.mask.sum(axis=(1, 2))[:, None]
    assert np.allclose(inside, e.colour)


def test_leak_tints_outside_and_keeps_the_edit() -> None:
    e = make_edit_set(30, seed=2)
    leaky = leaky_targets(e, 0.35)
    out = (1 - e.mask)[:, None]
    assert np.allclose(leaky * e.mask[:, None], e.target * e.mask[:, None])
    moved = np.abs(leaky - e.source) * out
    assert moved.sum() > 0.05 * out.sum() and np.allclose(leaky_targets(e, 0.0), e.target)
