"""Tab-PE and marginals: shapes, seeds, nearest candidates, and the parity structure."""

from __future__ import annotations

import numpy as np

from environments.tabpe import parity_table
from methods.tabpe.synth import marginals, nearest, tab_pe


def test_nearest_is_hamming() -> None:
    cards = (2, 2, 3)
    candidates = np.array([[0, 0, 0], [1, 1, 2]])
    assert nearest(np.array([[1, 1, 0], [0, 0, 2], [1, 0, 2]]), candidates, cards).tolist() == [
        1, 0, 1]


def test_outputs_are_valid_and_seeded() -> None:
    data = parity_table(500, seed=1)
    inputs = {"data": data, "cards": (2,) * 8, "epsilon": 3.0}
    for fn in (tab_pe, marginals):
        a, b = fn(inputs, {}, 7)["synthetic"], fn(inputs, {}, 7)["synthetic"]
        assert a.shape == (500, 8) and np.array_equal(a, b) and set(np.unique(a)) <= {0, 1}


def test_tab_pe_keeps_the_parity_that_marginals_lose() -> None:
    data = parity_table(2000, seed=3)
    inputs = {"data": data, "cards": (2,) * 8, "epsilon": 10.0}

    def agree(rows: np.ndarray) -> float:
        return float(np.mean(rows[:, :3].sum(axis=1) % 2 == rows[:, -1]))

    assert agree(tab_pe(inputs, {}, 0)["synthetic"]) > 0.85
    assert abs(agree(marginals(inputs, {}, 0)["synthetic"]) - 0.5) < 0.05
