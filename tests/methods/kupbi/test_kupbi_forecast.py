"""DLinear's decomposition, the train-only library, and both forecasters on a clean cycle."""

from __future__ import annotations

import numpy as np

from methods.kupbi.forecast import Library, decompose, dlinear, kup_bi


def test_decomposition_adds_up_and_a_constant_is_all_trend() -> None:
    h = np.random.default_rng(0).normal(size=(3, 20))
    trend, seasonal = decompose(h, 5)
    assert np.allclose(trend + seasonal, h)
    trend, seasonal = decompose(np.full((1, 10), 2.0), 5)
    assert np.allclose(trend, 2.0) and np.allclose(seasonal, 0.0)


def test_library_skips_overlapping_windows_and_rescales() -> None:
    series = np.sin(np.arange(200) * 2 * np.pi / 20)
    lib = Library(series, 150, lookback=20, future=10)
    assert lib.starts.max() + 10 <= 150  # the library ends inside the training part
    hist = 3.0 * series[80:100][None, :] + 1.0  # the same shape on another scale
    proxy = lib.proxy(hist, None, k=3)
    assert np.allclose(proxy, 3.0 * series[100:110] + 1.0, atol=1e-6)
    own = lib.proxy(series[80:100][None, :], np.array([100]), k=3)  # itself excluded
    assert np.isfinite(own).all()


def test_both_forecast_a_periodic_series_well() -> None:
    series = np.sin(np.arange(400) * 2 * np.pi / 24)
    starts = np.arange(300, 400 - 12 + 1)
    idx = starts[:, None] + np.arange(-48, 12)[None, :]
    rows = series[idx]
    inputs = {"past": series[:300], "val_start": 240, "test_histories": rows[:, :48],
              "lookback": 48, "horizon": 12, "continuation": 12}
    for fn in (dlinear, kup_bi):
        forecast = fn(inputs, {}, 0)["forecast"]
        assert forecast.shape == (len(starts), 12)
        assert np.mean((forecast - rows[:, 48:]) ** 2) < 1e-3


def test_a_validation_part_shorter_than_the_horizon_still_chooses_a_ridge() -> None:
    series = np.sin(np.arange(200) * 2 * np.pi / 24)
    inputs = {"past": series[:150], "val_start": 130, "test_histories": series[None, 102:150],
              "lookback": 48, "horizon": 30, "continuation": 12}
    for fn in (dlinear, kup_bi):
        out = fn(inputs, {}, 0)
        assert np.isfinite(out["val_mse"]) and out["forecast"].shape == (1, 30)
