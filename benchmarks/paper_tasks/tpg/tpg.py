"""TPG: the truncated policy-gradient estimator of a treatment effect under Markovian
interference, against the difference in means, on a simulated nonstationary system.

Johari, Peng and Xing, "Estimation of Treatment Effects Under Nonstationarity via the
Truncated Policy Gradient Estimator", arXiv:2506.05308. Each sample is one seeded
Bernoulli(1/2)-randomised experiment over ``horizon`` periods of the system in
``environments/tpg`` (engagement levels whose up-move drifts with the time of day and
rises under treatment; treatment costs a little now and pays later). The estimate is
scored against the exact GATE and against the estimator's exact expectation (the CLT
check: ``covered_mean``, ``z``); the baseline runs on the same trajectory.

    inspect eval harness/tpg_ab --model none
    inspect eval harness/tpg_ab --model none -T k=20 -T n_seeds=200
    inspect eval benchmarks/paper_tasks/tpg/tpg.py --model none -T method=dim -T baseline=none
    python -m harness.method_tasks logs/      # the paired table (method, baseline, delta)
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from inspect_ai import Task, task

from environments.tpg import MarkovSystem, exact_gate, expected_tpg, make_system, simulate
from harness.method_tasks import cell_sample, method_task
from harness.plugins.benchmark import benchmark

DEFAULT_N_SEEDS = 500
DEFAULT_HORIZON = 2000
DEFAULT_P = 0.5
DEFAULT_K = 10
DEFAULT_METHOD = "tpg"
DEFAULT_BASELINE = "dim"
DEFAULT_SEED = 0
FAMILY = "markov_ab"
Z95 = 1.959963984540054
VERSION = "1.0.0"


@functools.cache
def _system(horizon: int) -> MarkovSystem:
    return make_system(horizon=horizon)


@functools.cache
def _gate(horizon: int) -> float:
    return exact_gate(_system(horizon))


@functools.cache
def _expected(horizon: int, p: float, k: int) -> float:
    return expected_tpg(_system(horizon), p, k)


class MarkovABProblem:
    """Cells are (seed, horizon); the truth is the exact GATE and estimator expectation."""

    def __init__(self, p: float) -> None:
        self.p = p

    def prepare(self, cell: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
        horizon = int(cell["horizon"])
        traj = simulate(_system(horizon), self.p, int(cell["seed"]))
        return {"y": traj.y, "a": traj.a, "p": self.p}, {"horizon": horizon}

    def score(self, outputs: Mapping[str, Any], truth: Any,
              cell: Mapping[str, Any]) -> dict[str, float]:
        est, se = float(outputs["estimate"]), float(outputs["se"])
        horizon = int(truth["horizon"])
        gate = _gate(horizon)
        # the difference in means has no closed-form mean; it shares TPG(0)'s limit
        centre = _expected(horizon, self.p, int(outputs.get("k", 0)))
        err = est - gate
        return {
            "loss": abs(err), "estimate": est, "error": err, "abs_error": abs(err),
            "sq_error": err * err,
            "sq_dev": (est - centre) ** 2, "se": se, "ci_width": 2 * Z95 * se,
            "covered": float(abs(err) <= Z95 * se),
            "covered_mean": float(abs(est - centre) <= Z95 * se),
            "z": (est - centre) / se if se > 0 else float("nan"),
            "z2": ((est - centre) / se) ** 2 if se > 0 else float("nan"),
        }


def record_to_sample(record: Mapping[str, Any]) -> Any:
    """A cell record (``{"seed": 3, "horizon": 2000}``) as a sample with a stable id."""
    return cell_sample({"seed": int(record["seed"]), "horizon": int(record["horizon"])})


@benchmark("tpg_ab")
@task
def tpg_ab(
    n_seeds: int = DEFAULT_N_SEEDS,
    horizon: int = DEFAULT_HORIZON,
    p: float = DEFAULT_P,
    k: int = DEFAULT_K,
    method: str = DEFAULT_METHOD,
    baseline: str | None = DEFAULT_BASELINE,
    seed: int = DEFAULT_SEED,
    scale: float = 1.0,
    sandbox: str | None = None,
) -> Task:
    """TPG(k) vs the difference in means: bias, variance and CI coverage over seeds.

    Args:
        n_seeds: Experiments (samples), one trajectory each.
        horizon: Periods per experiment.
        p: Treatment probability per period.
        k: TPG's truncation (periods of outcome trajectory after each treatment).
        method: The plain method scored (``tpg`` or ``dim``).
        baseline: Run on the same trajectory too (``dim``, ``tpg`` or ``none``).
        seed: First experiment's seed (samples use seed .. seed + n_seeds - 1).
        scale: Multiplies ``horizon`` (the data-size factor shared by method tasks).
        sandbox: ``bwrap`` to run the estimators in the bubblewrap sandbox.
    """
    horizon = max(int(round(horizon * scale)), 2)
    records = [{"seed": seed + i, "horizon": horizon} for i in range(n_seeds)]
    samples = [record_to_sample(r) for r in records]
    return method_task(
        name="tpg_ab", family=FAMILY, problem=MarkovABProblem(p), samples=samples, method=method,
        baseline=baseline, version=VERSION, config={"k": k}, baseline_config={"k": k},
        sandbox=sandbox, metadata={"paper": "2506.05308"},
    )
