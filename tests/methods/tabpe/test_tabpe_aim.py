"""AIM: the estimator fits its measurements, the budget composes to rho, it keeps the
low-order correlations it measures, and it loses the parity that Tab-PE keeps."""

from __future__ import annotations

import numpy as np

from environments.tabpe import parity_table
from methods.tabpe.aim import Measurement, aim, data_marginal, estimate, marginal, workload
from methods.tabpe.synth import marginals, tab_pe


def test_estimate_fits_precise_measurements() -> None:
    rng = np.random.default_rng(0)
    data = rng.integers(0, 3, size=(400, 3))
    data[:, 2] = (data[:, 0] + data[:, 1]) % 3  # a 3-way structure no pair shows
    cards = (3, 3, 3)
    meas = [Measurement(c, data_marginal(data, cards, c), 0.5) for c in [(0, 1), (1, 2)]]
    p = estimate(meas, cards, 400.0, iters=600)
    for m in meas:
        assert np.abs(400 * marginal(p, m.clique) - m.y).max() < 2.0


def test_workload_weights_follow_the_overlap() -> None:
    work, weights = workload(4, 2)  # (0, 1): 2 from itself + 1 from each of 4 pairs
    assert len(work) == 6 and weights[(0,)] == 3.0 and weights[(0, 1)] == 6.0


def test_budget_is_spent_exactly_and_seeded() -> None:
    data = parity_table(500, seed=1)
    inputs = {"data": data, "cards": (2,) * 8, "epsilon": 2.0}
    a, b = aim(inputs, {"iters": 30}, 4), aim(inputs, {"iters": 30}, 4)
    assert np.array_equal(a["synthetic"], b["synthetic"]) and a["synthetic"].shape == (500, 8)
    assert abs(a["rho_spent"] - 2.0) < 1e-9 and a["rounds"] >= 2


def test_aim_keeps_a_pairwise_correlation_that_marginals_lose() -> None:
    rng = np.random.default_rng(2)
    data = rng.integers(0, 2, size=(2000, 5))
    data[:, 4] = data[:, 0]  # a copy: only the 2-way marginal sees it
    inputs = {"data": data, "cards": (2,) * 5, "epsilon": 3.0}
    same = [float(np.mean(fn(inputs, {}, 0)["synthetic"][:, [0, 4]].std(axis=1) == 0))
            for fn in (aim, marginals)]
    assert same[0] > 0.9 and abs(same[1] - 0.5) < 0.06


def test_tab_pe_keeps_the_parity_that_aim_loses() -> None:
    """Fails if Tab-PE is replaced by its baseline: AIM's 3-way workload never sees the
    4-way XOR, so its synthetic labels agree with the rule half the time."""
    data = parity_table(2000, seed=3)
    inputs = {"data": data, "cards": (2,) * 8, "epsilon": 10.0}

    def agree(rows: np.ndarray) -> float:
        return float(np.mean(rows[:, :3].sum(axis=1) % 2 == rows[:, -1]))

    assert agree(tab_pe(inputs, {}, 0)["synthetic"]) > 0.85
    assert abs(agree(aim(inputs, {"iters": 60}, 0)["synthetic"]) - 0.5) < 0.06
