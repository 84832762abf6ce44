"""The shipped series: loaded, standardised on the past, cut by the seed."""

from __future__ import annotations

import numpy as np

from environments.kupbi import SERIES, load_series, make_split, windows


def test_series_load_without_gaps() -> None:
    lengths = {name: len(load_series(name)) for name in SERIES}
    assert lengths == {"co2": 2284, "elnino": 732, "sunspots": 309}
    assert all(np.isfinite(load_series(name)).all() for name in SERIES)


def test_split_is_seeded_and_standardised_on_the_past() -> None:
    a, b = make_split("elnino", seed=3), make_split("elnino", seed=3)
    assert a.cut == b.cut and a.val_start < a.cut < len(a.series)
    assert abs(a.series[:a.cut].mean()) < 1e-9 and abs(a.series[:a.cut].std() - 1) < 1e-9
    assert {make_split("elnino", seed=s).cut for s in range(6)} != {a.cut}


def test_windows() -> None:
    rows = windows(np.arange(10.0), np.array([3, 5]), 2, 3)
    assert rows.tolist() == [[1, 2, 3, 4, 5], [3, 4, 5, 6, 7]]
