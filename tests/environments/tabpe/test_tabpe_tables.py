"""The tables: parity carries only a high-order correlation; fair is binned and split."""

from __future__ import annotations

import numpy as np

from environments.tabpe import make_table, parity_table


def test_parity_rule_and_uniform_pairs() -> None:
    t = parity_table(20000, noise=0.05, seed=0)
    assert abs(np.mean(t[:, :3].sum(axis=1) % 2 == t[:, -1]) - 0.95) < 0.01
    for j in range(7):  # the label is independent of every single bit
        assert abs(np.corrcoef(t[:, j], t[:, -1])[0, 1]) < 0.03


def test_tables_are_seeded_with_a_disjoint_holdout() -> None:
    a, b = make_table("parity", n=300, n_holdout=100, seed=2), make_table(
        "parity", n=300, n_holdout=100, seed=2)
    assert np.array_equal(a.data, b.data) and a.holdout.shape == (100, 8)
    fair = make_table("fair", n=500, n_holdout=200, seed=1)
    assert fair.data.shape == (500, 9) and max(fair.cards) <= 3
    assert set(np.unique(fair.data[:, -1])) == {0, 1}
