"""The setup swing: max - min over setups per model, paired items, flips, shares."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from benchmarks.causalgame.swing import analyse, ranking_flips
from harness.stats import main_effect_shares, setup_swing


def _frame(values: dict[tuple[str, str], list[float | None]]) -> pl.DataFrame:
    """Rows for (model, setup level) -> per-item values; one setup factor ``fmt``."""
    rows = []
    for (model, fmt), vals in values.items():
        for i, v in enumerate(vals):
            rows.append({"f_model": model, "f_fmt": fmt, "sample_id": f"q{i}", "epoch": 1,
                         "item": f"q{i}#1", "score_value": v, "error": None})
    return pl.DataFrame(rows, schema_overrides={"score_value": pl.Float64, "error": pl.String})


def test_swing_is_max_minus_min_of_paired_setup_means() -> None:
    out = setup_swing([[1, 1, 1, 0], [0, 0, 1, 0], [1, 0, 1, 0]], n_boot=500)
    assert out["swing"] == pytest.approx(0.5) and out["relative"] == pytest.approx(0.5 / 0.75)
    assert (out["argmax"], out["argmin"]) == (0, 1)
    assert 0.0 <= out["lo"] <= 0.5 <= out["hi"] <= 1.0
    identical = setup_swing([[1, 0, 1], [1, 0, 1]], n_boot=200)
    assert identical["swing"] == 0.0 and identical["hi"] == 0.0


def test_an_all_na_setup_leaves_the_swing_and_is_named() -> None:
    frame = _frame({("a", "x"): [1.0, 1.0], ("a", "y"): [0.0, 1.0], ("a", "z"): [None, None],
                    ("b", "x"): [0.0, 0.0], ("b", "y"): [1.0, 1.0], ("b", "z"): [1.0, 0.0]})
    out = analyse(frame, n_boot=200)
    a = out["models"]["a"]
    assert a["swing"] == pytest.approx(0.5) and a["all_na_setups"] == ["fmt=z"]
    assert [s["n_na"] for s in a["setups"]] == [0, 0, 2]
    # a beats b under x, b beats a under y: the ranking flips
    assert out["ranking"]["flips"] is True


def test_no_flip_when_one_model_leads_everywhere() -> None:
    means = {"a": {"s1": 0.9, "s2": 0.8}, "b": {"s1": 0.1, "s2": 0.2}}
    assert ranking_flips(means)["flips"] is False


def test_main_effect_shares_find_the_factor_that_moves_the_score() -> None:
    rng = np.random.default_rng(0)
    items = [f"i{k}" for k in range(20) for _ in range(4)]
    fmt = ["p", "q"] * 40
    stack = (["s", "s", "t", "t"]) * 20
    y = [(1.0 if f == "p" else 0.0) + 0.01 * rng.normal() for f in fmt]
    out = main_effect_shares(y, {"fmt": fmt, "stack": stack}, items, n_boot=200)
    assert out["fmt"]["share"] > 0.99 and out["fmt"]["lo"] > 0.95
    assert out["stack"]["share"] < 0.01


def test_a_setup_one_model_did_not_reach_is_not_run_not_na() -> None:
    frame = _frame({("a", "x"): [1.0, 1.0], ("a", "y"): [0.0, 1.0],
                    ("b", "x"): [0.0, 0.0]})
    out = analyse(frame, n_boot=100)
    assert out["models"]["b"]["not_run"] == ["fmt=y"]
    assert out["models"]["b"]["all_na_setups"] == [] and out["models"]["b"]["n_setups"] == 1
