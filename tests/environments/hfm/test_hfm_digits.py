"""The HFM world: episodes are balanced, disjoint, seeded, on the novel classes only, and
the roots sit at 0 in the image-only coordinates."""

from __future__ import annotations

import numpy as np

from environments.hfm import NOVEL_CLASSES, encoder_features, make_episode

TEXT = np.random.default_rng(0).standard_normal((10, 32))


def test_episode_shape_balance_and_disjointness() -> None:
    ep = make_episode(1, 4, TEXT, dim=6, visual=5)
    _, y = encoder_features()
    novel = int(np.isin(y, NOVEL_CLASSES).sum())
    assert ep.support_x.shape == (20, 11) and ep.roots.shape == (5, 11)
    assert np.bincount(ep.support_y).tolist() == [4] * 5
    assert len(ep.query_y) == novel - 20
    rows = {tuple(r) for r in np.round(ep.query_x, 10)}
    assert not any(tuple(r) in rows for r in np.round(ep.support_x, 10))
    assert np.all(ep.roots[:, 6:] == 0)


def test_episodes_are_seeded() -> None:
    a, b = make_episode(2, 1, TEXT), make_episode(2, 1, TEXT)
    assert np.array_equal(a.support_x, b.support_x)
    assert not np.array_equal(a.support_x, make_episode(3, 1, TEXT).support_x)
