"""TRECA: treatment responder classification with abstention, the doubly robust rule
against the plug-in rule, on simulated studies with known potential outcomes.

"Treatment Responder Classification with Abstention" (TRECA, ICML 2026,
https://openreview.net/forum?id=O6iPDyUP97: "we develop a doubly robust
method named TRECA"). Each sample is a cell (seed, abstention cost ``c``): a seeded
observational study from ``environments/treca`` (a wiggly control-outcome model, a smooth
responder probability, confounded treatment, monotone outcomes), a rule learned from its
``n`` people, and that rule's regret on ``n_test`` new people against Chow's Bayes rule,
exact because the responder probability is known. Sweeping ``c`` traces regret against
the abstention rate; the baseline runs on the same study.

    inspect eval harness/treca --model none
    inspect eval harness/treca --model none -T n=8000 -T costs=0.2
    inspect eval benchmarks/paper_tasks/treca/treca.py --model none -T method=treca-plugin \\
        -T baseline=none
    python -m harness.method_tasks logs/      # the paired table (method, baseline, delta)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from inspect_ai import Task, task
from inspect_ai.dataset import Sample

from environments.treca import abstention_risk, bayes_rule, make_trial
from harness.method_tasks import cell_sample, method_task
from harness.plugins.benchmark import benchmark

DEFAULT_N_SEEDS = 40
DEFAULT_N = 2000
DEFAULT_N_TEST = 5000
DEFAULT_COSTS = "0.1,0.2,0.3,0.4"
DEFAULT_METHOD = "treca"
DEFAULT_BASELINE = "treca-plugin"
DEFAULT_SEED = 0
FAMILY = "responder_abstention"
VERSION = "1.0.0"


class ResponderProblem:
    """Cells are (seed, n, c); the truth is the test people's responder probability."""

    def __init__(self, n_test: int) -> None:
        self.n_test = n_test

    def prepare(self, cell: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
        trial = make_trial(n=int(cell["n"]), n_test=self.n_test, seed=int(cell["seed"]))
        inputs = {"x": trial.x, "a": trial.a, "y": trial.y, "x_test": trial.x_test}
        return inputs, trial.tau_test

    def score(self, outputs: Mapping[str, Any], truth: Any,
              cell: Mapping[str, Any]) -> dict[str, float]:
        c = float(cell["config"]["c"])
        decisions = np.asarray(outputs["decisions"], dtype=np.int64)
        best = bayes_rule(truth, c)
        risk = abstention_risk(decisions, truth, c)
        tau_hat = np.asarray(outputs["tau_hat"], dtype=float)
        return {
            "regret": risk - abstention_risk(best, truth, c), "risk": risk,
            "loss": risk - abstention_risk(best, truth, c),
            "abstain_rate": float(np.mean(decisions == 2)),
            "bayes_abstain_rate": float(np.mean(best == 2)),
            "agreement": float(np.mean(decisions == best)),
            "tau_rmse": float(np.sqrt(np.mean((tau_hat - truth) ** 2))),
        }


def record_to_sample(record: Mapping[str, Any]) -> Sample:
    """A cell record (``{"seed": 0, "n": 2000, "c": 0.2}``) as a sample with a stable id."""
    return cell_sample({"seed": int(record["seed"]), "n": int(record["n"]),
                        "config": {"c": float(record["c"])}},
                       id=f"seed={int(record['seed'])},n={int(record['n'])},"
                          f"c={float(record['c']):g}")


def _costs(costs: float | str | list[Any] | tuple[Any, ...]) -> list[float]:
    if isinstance(costs, int | float):
        return [float(costs)]
    if isinstance(costs, str):
        return [float(c) for c in costs.split(",") if c.strip()]
    return [float(c) for c in costs]


@benchmark("treca")
@task
def treca(
    n_seeds: int = DEFAULT_N_SEEDS,
    n: int = DEFAULT_N,
    n_test: int = DEFAULT_N_TEST,
    costs: float | str | list[float] = DEFAULT_COSTS,
    method: str = DEFAULT_METHOD,
    baseline: str | None = DEFAULT_BASELINE,
    seed: int = DEFAULT_SEED,
    scale: float = 1.0,
    sandbox: str | None = None,
) -> Task:
    """The DR responder rule vs plug-in: regret against the abstention rate.

    Args:
        n_seeds: Simulated studies.
        n: People per study (the rule is learned from them).
        n_test: New people the rule classifies (its regret is exact on them).
        costs: Abstention costs ``c`` (each study is scored at every cost).
        method: The plain method scored (``treca`` or ``treca-plugin``).
        baseline: Run on the same study too (or ``none``).
        seed: First study's seed.
        scale: Multiplies ``n`` (the data-size factor shared by method tasks).
        sandbox: ``bwrap`` to run the rules in the bubblewrap sandbox.
    """
    n = max(int(round(n * scale)), 20)
    records = [{"seed": seed + i, "n": n, "c": c} for i in range(n_seeds)
               for c in _costs(costs)]
    samples = [record_to_sample(r) for r in records]
    for c in _costs(costs):
        if not 0 < c < 0.5:
            raise ValueError(f"abstention cost must be in (0, 1/2), got {c}")
    return method_task(
        name="treca", family=FAMILY, problem=ResponderProblem(n_test),
        samples=samples, method=method,
        baseline=baseline, version=VERSION, sandbox=sandbox,
    )
