"""CIs over training seeds: per-seed cell means -> mean and t interval per product."""

from __future__ import annotations

import pytest

from methods.scout.seeds import SCORES, over_seeds


def _cell(solved: float, invalid: float) -> dict[str, float]:
    row = dict.fromkeys(SCORES, 0.0)
    row.update(solved=solved, invalid_calls=invalid)
    return row


def test_over_seeds_gives_a_t_interval_over_seed_means() -> None:
    cells = {("sft", "0"): _cell(0.0, 2.0), ("sft", "1"): _cell(0.5, 3.0),
             ("sft", "2"): _cell(0.25, 4.0), ("base", "0"): _cell(0.0, 7.0),
             ("base", "1"): _cell(0.0, 7.0)}
    out = over_seeds(cells)
    sft = out["sft"]
    assert sft["seeds"] == ["0", "1", "2"]
    assert sft["solved"]["mean"] == pytest.approx(0.25)
    assert sft["solved"]["lo"] == 0.0 and 0.25 < sft["solved"]["hi"] <= 1.0  # clipped share
    # sd 1 over 3 seeds: half-width t(2) * 1 / sqrt(3) = 2.484
    assert sft["invalid_calls"]["hi"] - 3.0 == pytest.approx(4.303 / 3 ** 0.5, abs=1e-3)
    assert out["base"]["invalid_calls"] == {"per_seed": [7.0, 7.0], "mean": 7.0,
                                            "lo": 7.0, "hi": 7.0}
