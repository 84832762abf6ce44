"""The curve summary: per (algo, staleness), first/last-window rewards and CIs over seeds."""

from __future__ import annotations

import pytest

pl = pytest.importorskip("polars")

from methods.rl.curves import curves, summarise  # noqa: E402


def _frame() -> object:
    rows = []
    for seed, slope in ((0, 0.01), (1, 0.02)):
        for step in range(1, 11):
            rows.append({"opt_algo": "grpo", "opt_staleness": "2", "seed": seed, "step": step,
                         "reward": slope * step, "kl": 0.1, "log_ratio": 0.01 * step,
                         "cpu_s": 0.5 * step})
    return pl.DataFrame(rows)


def test_summary_over_seeds() -> None:
    (row,) = summarise(_frame(), window=5)
    assert row["algo"] == "grpo" and row["staleness"] == 2 and row["seeds"] == [0, 1]
    # seed 0: first 5 steps mean 0.03, last 5 0.08; seed 1: 0.06 and 0.16
    assert row["reward_first"]["values"] == pytest.approx([0.03, 0.06])
    assert row["gain"]["values"] == pytest.approx([0.05, 0.10])
    assert row["gain"]["mean"] == pytest.approx(0.075)
    assert row["gain"]["lo"] < 0.075 < row["gain"]["hi"]
    assert row["log_ratio_max"]["values"] == pytest.approx([0.1, 0.1])
    assert row["s_per_step"]["values"] == pytest.approx([0.5, 0.5])


def test_curves_average_seeds_per_step() -> None:
    out = curves(_frame())
    assert [r["step"] for r in out] == list(range(1, 11))
    assert out[0]["reward"] == pytest.approx(0.015) and out[0]["seeds"] == 2
