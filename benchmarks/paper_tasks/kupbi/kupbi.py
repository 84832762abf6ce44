"""KUP-BI: DLinear with and without a train-only retrieved post-target continuation, on
series that ship with statsmodels, MSE/MAE at a rolling origin.

Liu et al., "Beyond Extrapolation: Knowledge Utilization Paradigm with Bidirectional
Inspiration for Time Series Forecasting" (KUP-BI, arXiv:2605.19249: a continuation proxy
from a train-only library, fused into a forecasting backbone). Each
sample is a cell (series, seed): ``environments/kupbi`` standardises a statsmodels series
(``co2`` weekly, ``elnino`` monthly, ``sunspots`` yearly) on its past and cuts it at a
seed-chosen origin; the methods see the past and the look-back windows of every test
forecast origin after the cut, and are scored by MSE and MAE of their forecasts of the next
``horizon`` values. The baseline runs on the same cut.

    inspect eval harness/kupbi --model none
    inspect eval harness/kupbi --model none -T horizon=48 -T series=co2,elnino
    python -m harness.method_tasks --by series --keys mse,mae logs/
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from inspect_ai import Task, task
from inspect_ai.dataset import Sample

from environments.kupbi import SERIES, make_split, windows
from harness.method_tasks import cell_sample, method_task
from harness.plugins.benchmark import benchmark

DEFAULT_N_SEEDS = 5
DEFAULT_SERIES = ",".join(SERIES)
DEFAULT_METHOD = "kup-bi"
DEFAULT_BASELINE = "dlinear"
DEFAULT_SEED = 100  # seeds 0-2 were looked at while writing the method
FAMILY = "long_term_forecasting"
VERSION = "1.0.0"


class ForecastProblem:
    """Cells are (series, seed); the truth is every test window's target."""

    def __init__(self, lookback: int, horizon: int, continuation: int) -> None:
        self.lookback, self.horizon, self.continuation = lookback, horizon, continuation

    def prepare(self, cell: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
        split = make_split(str(cell["series"]), seed=int(cell["seed"]))
        starts = np.arange(split.cut, len(split.series) - self.horizon + 1, dtype=np.int64)
        rows = windows(split.series, starts, self.lookback, self.horizon)
        inputs = {"past": split.series[:split.cut], "val_start": split.val_start,
                  "test_histories": rows[:, :self.lookback], "lookback": self.lookback,
                  "horizon": self.horizon, "continuation": self.continuation}
        return inputs, {"target": rows[:, self.lookback:], "cut": split.cut}

    def score(self, outputs: Mapping[str, Any], truth: Any,
              cell: Mapping[str, Any]) -> dict[str, float]:
        err = np.asarray(outputs["forecast"], dtype=float) - truth["target"]
        mse = float(np.mean(err**2))
        return {"loss": mse, "mse": mse, "mae": float(np.mean(np.abs(err))),
                "val_mse": float(outputs.get("val_mse", float("nan"))),
                "test_windows": float(len(err)), "cut": float(truth["cut"])}


def record_to_sample(record: Mapping[str, Any]) -> Sample:
    """A cell record (``{"series": "co2", "seed": 100}``) as a sample with a stable id."""
    return cell_sample({"series": str(record["series"]), "seed": int(record["seed"])})


@benchmark("kupbi")
@task
def kupbi(
    n_seeds: int = DEFAULT_N_SEEDS,
    series: str | list[str] = DEFAULT_SERIES,
    lookback: int = 48,
    horizon: int = 24,
    continuation: int = 24,
    k: int = 10,
    method: str = DEFAULT_METHOD,
    baseline: str | None = DEFAULT_BASELINE,
    seed: int = DEFAULT_SEED,
    scale: float = 1.0,
    sandbox: str | None = None,
) -> Task:
    """KUP-BI vs DLinear: MSE and MAE of long-term forecasts at rolling origins.

    Args:
        n_seeds: Forecast origins (cuts) per series.
        series: Any of ``co2``, ``elnino``, ``sunspots``.
        lookback: Look-back window L.
        horizon: Forecast horizon H.
        continuation: Post-target continuation length C in KUP-BI's library.
        k: Neighbours retrieved per query.
        method: The plain method scored (``kup-bi`` or ``dlinear``).
        baseline: Run on the same cut too (or ``none``).
        seed: First origin's seed.
        scale: Multiplies the horizon (the size factor shared by method tasks).
        sandbox: ``bwrap`` to run the forecasters in the bubblewrap sandbox.
    """
    names = series.split(",") if isinstance(series, str) else list(series)
    horizon = max(int(round(horizon * scale)), 1)
    records = [{"series": s.strip(), "seed": seed + i} for s in names for i in range(n_seeds)]
    config = {"k": k}
    return method_task(
        name="kupbi", family=FAMILY, problem=ForecastProblem(lookback, horizon, continuation),
        samples=[record_to_sample(r) for r in records], method=method, baseline=baseline,
        version=VERSION, config=config, baseline_config=config, sandbox=sandbox,
        metadata={"paper": "2605.19249"},
    )
