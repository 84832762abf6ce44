"""Univariate series shipped with statsmodels, standardised on their training part, and
sliding windows ``history (L) -> target (H) -> post-target continuation (C)``.

* ``co2``: Mauna Loa weekly CO2, 1958-2001 (2,284 weeks; the 59 gaps linearly interpolated);
* ``elnino``: monthly Pacific sea-surface temperature, 1950-2010 (732 months);
* ``sunspots``: yearly sunspot numbers, 1700-2008 (309 years).

A split is chronological with a rolling origin: ``seed`` moves the cut between the past
(train, whose last ``val_frac`` is validation) and the test period, so that cells with
different seeds are different forecast origins of the same series. Nothing after the cut is
used to fit or to build a library; test windows start at the cut and end inside the series.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]
SERIES = ("co2", "elnino", "sunspots")


def load_series(name: str) -> Array:
    """The raw series (needs statsmodels, a base dependency)."""
    from statsmodels import datasets

    if name == "co2":
        values = datasets.co2.load_pandas().data["co2"].to_numpy(dtype=float).copy()
        gaps = np.isnan(values)
        idx = np.arange(len(values))
        values[gaps] = np.interp(idx[gaps], idx[~gaps], values[~gaps])
        return values
    if name == "elnino":
        frame = datasets.elnino.load_pandas().data
        return frame.drop(columns=["YEAR"]).to_numpy(dtype=float).ravel()
    if name == "sunspots":
        return datasets.sunspots.load_pandas().data["SUNACTIVITY"].to_numpy(dtype=float)
    raise ValueError(f"unknown series {name!r}: {', '.join(SERIES)}")


@dataclass(frozen=True)
class Split:
    """A standardised series cut at ``cut``: ``series[:cut]`` is the past."""

    series: Array
    cut: int
    val_start: int
    name: str


def make_split(name: str, seed: int = 0, test_frac: float = 0.2, jitter: float = 0.15,
               val_frac: float = 0.2) -> Split:
    """Standardise on the past; the cut is at ``1 - test_frac - u * jitter`` of the series,
    ``u ~ U(0, 1)`` from ``seed``."""
    raw = load_series(name)
    u = float(np.random.default_rng(seed).random())
    cut = int(round(len(raw) * (1.0 - test_frac - u * jitter)))
    mean, sd = raw[:cut].mean(), raw[:cut].std()
    return Split(series=(raw - mean) / sd, cut=cut,
                 val_start=int(round(cut * (1.0 - val_frac))), name=name)


def windows(series: Array, starts: NDArray[np.int64], lookback: int,
            length: int) -> Array:
    """Rows ``series[s - lookback : s + length]`` for each start ``s``."""
    idx = starts[:, None] + np.arange(-lookback, length)[None, :]
    return series[idx]
