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


def test_paired_difference_over_common_seeds() -> None:
    from methods.scout.seeds import paired

    cells = {("rl", "0"): _cell(0.25, 2.0), ("rl", "1"): _cell(0.0, 1.0),
             ("rl", "2"): _cell(0.5, 4.0), ("sft", "0"): _cell(0.0, 3.0),
             ("sft", "1"): _cell(0.0, 2.0), ("sft", "2"): _cell(0.25, 6.0),
             ("sft", "3"): _cell(1.0, 0.0)}
    row = paired(cells, "rl", "sft")
    assert row["seeds"] == ["0", "1", "2"]  # seed 3 has no rl cell
    assert row["solved"]["per_seed"] == [0.25, 0.0, 0.25]
    assert row["solved"]["mean"] == pytest.approx(1 / 6)
    # differences -1, -1, -2: mean -4/3, sd 1/sqrt(3), half-width t(2) * sd / sqrt(3)
    half = 4.303 * (1 / 3 ** 0.5) / 3 ** 0.5
    assert row["invalid_calls"]["mean"] == pytest.approx(-4 / 3)
    assert row["invalid_calls"]["hi"] == pytest.approx(-4 / 3 + half, abs=1e-3)
    with pytest.raises(ValueError, match="share no seed"):
        paired(cells, "rl", "nothing")
