"""Leaderboard tables on synthetic logs with known per-sample scores, checked by hand."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from _lb_synth import write_log
from scipy import stats as sps

from leaderboards.build import read_logs
from leaderboards.tables import Options, Price, Reference, compute, parse_reference

# 10 items x 2 epochs, epoch-major; mid-range values so no interval is clipped at 0 or 1
A = [0.6, 0.4, 0.7, 0.5, 0.3, 0.6, 0.8, 0.5, 0.4, 0.6,
     0.5, 0.5, 0.6, 0.7, 0.4, 0.5, 0.7, 0.6, 0.3, 0.5]
B = [0.5, 0.3, 0.6, 0.4, 0.3, 0.5, 0.6, 0.4, 0.4, 0.5,
     0.4, 0.4, None, 0.5, 0.2, 0.5, 0.6, 0.5, 0.3, 0.4]  # one errored sample (item 2, ep 2)


def _by_hand_clustered(values: list[float], n_items: int) -> tuple[float, float, float]:
    """(mean, lo, hi): t interval, SE clustered by item (CR1), G - 1 degrees of freedom."""
    x = np.array(values)
    items = np.arange(len(x)) % n_items
    mean = x.mean()
    sums = np.array([(x[items == g] - mean).sum() for g in range(n_items)])
    se = math.sqrt(n_items / (n_items - 1) * (sums**2).sum() / len(x) ** 2)
    half = sps.t.ppf(0.975, n_items - 1) * se
    return mean, mean - half, mean + half


@pytest.fixture
def board(tmp_path: Path):  # type: ignore[no-untyped-def]
    write_log(tmp_path, "a", model="m/a", scores=A, epochs=2, tokens=(100, 20), time=2.0)
    write_log(tmp_path, "b", model="m/b", scores=B, epochs=2, tokens=(50, 5), time=1.0)
    frame, _ = read_logs(tmp_path)
    prices = {"m/a": Price(input=1.0, output=2.0)}
    return compute(frame, Options(pricing=prices, n_boot=300))


def test_scores_and_clustered_cis_equal_hand_computed_values(board) -> None:  # type: ignore[no-untyped-def]
    rows = {r["model"]: r for r in board.entries.to_dicts()}
    mean, lo, hi = _by_hand_clustered(A, 10)
    assert rows["m/a"]["score"] == pytest.approx(mean, abs=1e-12)
    assert (rows["m/a"]["ci_lo"], rows["m/a"]["ci_hi"]) == pytest.approx((lo, hi), abs=1e-12)
    b_scored = [0.0 if v is None else v for v in B]  # the errored sample scores 0
    mean, lo, hi = _by_hand_clustered(b_scored, 10)
    assert rows["m/b"]["score"] == pytest.approx(mean, abs=1e-12)
    assert (rows["m/b"]["ci_lo"], rows["m/b"]["ci_hi"]) == pytest.approx((lo, hi), abs=1e-12)


def test_errored_sample_is_counted_not_dropped(board) -> None:  # type: ignore[no-untyped-def]
    rows = {r["model"]: r for r in board.entries.to_dicts()}
    assert (rows["m/a"]["n"], rows["m/a"]["n_completed"], rows["m/a"]["errors"]) == (20, 20, 0)
    assert (rows["m/b"]["n"], rows["m/b"]["n_completed"], rows["m/b"]["errors"]) == (20, 19, 1)
    assert rows["m/b"]["n_items"] == 10


def test_paired_difference_equals_hand_computed_value(board) -> None:  # type: ignore[no-untyped-def]
    a = np.array(A).reshape(2, 10).mean(axis=0)  # epochs averaged per item
    b = np.array([0.0 if v is None else v for v in B]).reshape(2, 10).mean(axis=0)
    d = a - b
    half = sps.t.ppf(0.975, 9) * d.std(ddof=1) / math.sqrt(10)
    pair = board.pairwise.filter(pl.col("a").str.starts_with("m/a")).row(0, named=True)
    assert pair["n_pairs"] == 10
    assert pair["diff"] == pytest.approx(d.mean(), abs=1e-12)
    assert (pair["ci_lo"], pair["ci_hi"]) == pytest.approx((d.mean() - half, d.mean() + half),
                                                           abs=1e-12)
    back = board.pairwise.filter(pl.col("a").str.starts_with("m/b")).row(0, named=True)
    assert back["diff"] == pytest.approx(-d.mean(), abs=1e-12)


def test_tokens_cost_and_time(board) -> None:  # type: ignore[no-untyped-def]
    rows = {r["model"]: r for r in board.entries.to_dicts()}
    a = rows["m/a"]
    assert (a["input_tokens"], a["output_tokens"], a["tokens_per_sample"]) == (2000, 400, 120.0)
    assert a["cost"] == pytest.approx((2000 * 1.0 + 400 * 2.0) / 1e6)
    assert a["time_per_sample"] == 2.0 and a["working_time_per_sample"] == 1.0
    assert rows["m/b"]["cost"] is None  # no price given: no invented cost


def test_models_within_paired_noise_share_a_rank_interval(tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    n = 60
    base = rng.integers(0, 2, size=n).astype(float)
    close = base.copy()
    close[:3] = 1 - close[:3]  # differs from `base` on 3 of 60 items
    write_log(tmp_path, "base", model="m/base", scores=list(base))
    write_log(tmp_path, "close", model="m/close", scores=list(close))
    write_log(tmp_path, "top", model="m/top", scores=[1.0] * n)
    frame, _ = read_logs(tmp_path)
    board = compute(frame, Options(n_boot=500))
    pair = board.pairwise.filter(pl.col("a").str.starts_with("m/base")
                                 & pl.col("b").str.starts_with("m/close")).row(0, named=True)
    assert pair["ci_lo"] < 0 < pair["ci_hi"]  # the difference is within the paired CI
    rows = {r["model"]: r for r in board.entries.to_dicts()}
    shared = (max(rows["m/base"]["rank_lo"], rows["m/close"]["rank_lo"])
              <= min(rows["m/base"]["rank_hi"], rows["m/close"]["rank_hi"]))
    assert shared
    assert (rows["m/top"]["rank"], rows["m/top"]["rank_lo"], rows["m/top"]["rank_hi"]) == (1, 1, 1)
    for model in ("m/base", "m/close"):
        assert rows[model]["rank_lo"] >= 2  # nobody shares rank 1 with a clear winner


def test_normalised_scores_and_overall_table(tmp_path: Path) -> None:
    write_log(tmp_path, "o", model="scripted/x-oracle", scores=[1.0, 1.0, 1.0, 1.0])
    write_log(tmp_path, "r", model="scripted/x-random", scores=[0.25, 0.25, 0.0, 0.5])
    write_log(tmp_path, "m", model="m/mid", scores=[1.0, 0.5, 0.5, 0.5])
    write_log(tmp_path, "o2", model="scripted/x-oracle", scores=[2.0, 2.0],
              task="synth/other", scorer="points")
    write_log(tmp_path, "m2", model="m/mid", scores=[2.0, 3.0], task="synth/other",
              scorer="points")
    frame, _ = read_logs(tmp_path)
    board = compute(frame, Options(n_boot=100))
    first = {r["model"]: r for r in board.entries.filter(
        pl.col("benchmark") == "synth/bench").to_dicts()}
    # floor 0.25 (random) -> 0, oracle 1.0 -> 1: (0.625 - 0.25) / 0.75
    assert first["m/mid"]["normalised"] == pytest.approx(0.5)
    assert first["scripted/x-oracle"]["normalised"] == 1.0
    assert first["scripted/x-random"]["normalised"] == 0.0
    assert first["scripted/x-oracle"]["reference"] == "oracle"
    other = {r["model"]: r for r in board.entries.filter(
        pl.col("benchmark") == "synth/other").to_dicts()}
    assert other["m/mid"]["normalised"] is None  # no floor on that benchmark
    overall = {r["model"]: r for r in board.overall.to_dicts()}
    # m/mid: beats random only on bench 1 (1/2), beats the oracle on bench 2 (1/1)
    assert overall["m/mid"]["mean_win_rate"] == pytest.approx((0.5 + 1.0) / 2)
    assert overall["m/mid"]["mean_normalised"] == pytest.approx(0.5)
    assert overall["m/mid"]["n_benchmarks"] == 2
    # a fixed floor makes the second benchmark normalisable: (2.5 - 0) / (2 - 0) for mid
    fixed = compute(frame, Options(n_boot=100, floor=(
        Reference(pattern="random"), parse_reference("synth/other=0"))))
    row = fixed.entries.filter((pl.col("benchmark") == "synth/other")
                               & (pl.col("model") == "m/mid")).row(0, named=True)
    assert row["normalised"] == pytest.approx(1.25)


def test_setup_labels_name_only_the_settings_that_vary(tmp_path: Path) -> None:
    for style in ("plain", "terse"):
        for model in ("m/a", "m/b"):
            write_log(tmp_path, f"{model[-1]}-{style}", model=model, scores=[1.0, 0.0],
                      task_args={"prompt_style": style, "n": 2, "agent": "react"})
    frame, _ = read_logs(tmp_path)
    board = compute(frame, Options(n_boot=50))
    assert sorted(set(board.entries["setup"])) == ["prompt_style=plain", "prompt_style=terse"]
    assert board.entries.height == 4


def test_parse_reference() -> None:
    assert parse_reference("oracle") == Reference(pattern="oracle")
    assert parse_reference("bench=0") == Reference(value=0.0, benchmark="bench")
    assert parse_reference("harness/x=scripted/x-oracle") == Reference(
        pattern="scripted/x-oracle", benchmark="harness/x")
