"""SIKA-GP: a sparse dyadic template-basis GP against an inducing-point GP (and the exact
GP as a reference), NLL and cost as the basis size M grows, on synthetic 1-D regression.

SIKA-GP (ICML 2026: "sparse inducing kernel approximations based on a dyadic ordered
template basis, incurring only O(log M) complexity dependence on the number of inducing
points"). Each sample is a cell (seed, M): a seeded data set from
``environments/sika_gp`` (N noisy points of a two-scale function), a GP fitted with basis
size / inducing points M (hyperparameters by each method's own marginal likelihood on one
grid), scored by test NLL, RMSE to the latent function and fit/predict time. The baseline
runs on the same data and M; ``-T method=gp-exact -T baseline=none -T ms=0`` scores the
exact GP once per seed.

    inspect eval harness/sika_gp --model none
    inspect eval harness/sika_gp --model none -T ms=16,64,256 -T n=4000
    inspect eval benchmarks/paper_tasks/sika_gp/sika_gp.py --model none -T method=gp-exact \\
        -T baseline=none -T ms=0
    python -m harness.method_tasks logs/      # the paired table (method, baseline, delta)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from inspect_ai import Task, task
from inspect_ai.dataset import Sample

from environments.sika_gp import make_regression
from harness.method_tasks import cell_sample, method_task
from harness.plugins.benchmark import benchmark

DEFAULT_N_SEEDS = 5
DEFAULT_N = 2000
DEFAULT_N_TEST = 500
DEFAULT_MS = "16,32,64,128,256,512"
DEFAULT_METHOD = "sika"
DEFAULT_BASELINE = "gp-inducing"
DEFAULT_SEED = 0
FAMILY = "gp_regression"
VERSION = "1.0.0"


class RegressionProblem:
    """Cells are (seed, n, m); the truth is the test targets and latent values."""

    def __init__(self, n_test: int) -> None:
        self.n_test = n_test

    def prepare(self, cell: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
        data = make_regression(n=int(cell["n"]), n_test=self.n_test, seed=int(cell["seed"]))
        return {"x": data.x, "y": data.y, "x_test": data.x_test}, data

    def score(self, outputs: Mapping[str, Any], truth: Any,
              cell: Mapping[str, Any]) -> dict[str, float]:
        mean = np.asarray(outputs["mean"], dtype=float)
        var = np.asarray(outputs["var"], dtype=float)
        resid = truth.y_test - mean
        nll = float(np.mean(0.5 * np.log(2 * math.pi * var) + resid**2 / (2 * var)))
        m_used = float(outputs["m"])
        return {
            "loss": nll, "nll": nll, "rmse": float(np.sqrt(np.mean((truth.f_test - mean) ** 2))),
            "fit_s": float(outputs["fit_s"]), "predict_s": float(outputs["predict_s"]),
            "m_used": m_used, "log2_m": math.log2(max(m_used, 1.0)),
        }


def record_to_sample(record: Mapping[str, Any]) -> Sample:
    """A cell record (``{"seed": 0, "n": 2000, "m": 64}``) as a sample with a stable id."""
    cell = {"seed": int(record["seed"]), "n": int(record["n"]), "m": int(record["m"]),
            "config": {"m": int(record["m"])}}
    return cell_sample(cell, id=f"seed={cell['seed']},n={cell['n']},m={cell['m']}")


def _ms(ms: int | str | list[Any] | tuple[Any, ...]) -> list[int]:
    if isinstance(ms, int):
        return [ms]
    if isinstance(ms, str):
        return [int(m) for m in ms.split(",") if m.strip()]
    return [int(m) for m in ms]


@benchmark("sika_gp")
@task
def sika_gp(
    n_seeds: int = DEFAULT_N_SEEDS,
    n: int = DEFAULT_N,
    n_test: int = DEFAULT_N_TEST,
    ms: int | str | list[int] = DEFAULT_MS,
    method: str = DEFAULT_METHOD,
    baseline: str | None = DEFAULT_BASELINE,
    seed: int = DEFAULT_SEED,
    scale: float = 1.0,
    sandbox: str | None = None,
) -> Task:
    """The dyadic basis GP vs inducing points: NLL and time as M grows.

    Args:
        n_seeds: Data sets.
        n: Training points per data set.
        n_test: Test points.
        ms: Basis sizes / inducing-point counts M (the exact GP ignores it).
        method: The plain method scored (``sika``, ``gp-inducing`` or ``gp-exact``).
        baseline: Run on the same data and M too (or ``none``).
        seed: First data set's seed.
        scale: Multiplies ``n`` (the data-size factor shared by method tasks).
        sandbox: ``bwrap`` to run the GPs in the bubblewrap sandbox.
    """
    n = max(int(round(n * scale)), 10)
    records = [{"seed": seed + i, "n": n, "m": m} for i in range(n_seeds) for m in _ms(ms)]
    return method_task(
        name="sika_gp", family=FAMILY, problem=RegressionProblem(n_test),
        samples=[record_to_sample(r) for r in records], method=method, baseline=baseline,
        version=VERSION, sandbox=sandbox,
    )
