"""HMH: Haar spectral filters on a learned hierarchy against Chebyshev filters (and a
GCN), node classification on heterophilous SBM graphs with hubs, accuracy and time vs n.

Hierarchical Multi-view HAAR (HMH, ICML 2026; code github.com/sazzad1008/Scalable-HMH101).
Each sample is a cell (seed, n): a seeded degree-corrected SBM from ``environments/hmh``
(4 classes, edge homophily 0.1, Pareto(1.5) degree weights so hubs reach ~2 sqrt(n)
neighbours, 16-d weak Gaussian features, a 30/20/50 train/val/test split). A method sees
the graph, the features and the train/val labels; it is scored by test accuracy, accuracy
on the hub nodes (the top 10% of test nodes by degree) and its wall time. The baseline runs
on the same graph and split.

    inspect eval harness/hmh --model none
    inspect eval harness/hmh --model none -T ns=1000,8000 -T baseline=gcn
    python -m harness.method_tasks --by n --keys accuracy,wall_s logs/
    python -m harness.method_tasks --growth n_nodes:wall_s logs/
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from inspect_ai import Task, task
from inspect_ai.dataset import Sample

from environments.hmh import edge_homophily, make_sbm
from harness.method_tasks import cell_sample, method_task
from harness.plugins.benchmark import benchmark

DEFAULT_N_SEEDS = 5
DEFAULT_NS = "500,1000,2000,4000"
DEFAULT_HOMOPHILY = 0.1
DEFAULT_METHOD = "hmh"
DEFAULT_BASELINE = "chebnet"
DEFAULT_SEED = 0
FAMILY = "node_classification"
VERSION = "1.0.0"


class NodeClassificationProblem:
    """Cells are (seed, n); the truth is the graph (its test labels and degrees)."""

    def __init__(self, homophily: float) -> None:
        self.homophily = homophily

    def prepare(self, cell: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
        g = make_sbm(n=int(cell["n"]), homophily=self.homophily, seed=int(cell["seed"]))
        inputs = {"n": g.n, "edges": g.edges, "x": g.x, "train": g.train, "val": g.val,
                  "test": g.test, "y_train": g.y[g.train], "y_val": g.y[g.val], "k": g.k}
        return inputs, g

    def score(self, outputs: Mapping[str, Any], truth: Any,
              cell: Mapping[str, Any]) -> dict[str, float]:
        pred = np.asarray(outputs["pred"], dtype=np.int64)
        right = pred == truth.y[truth.test]
        deg = truth.degrees()[truth.test]
        hubs = deg >= np.quantile(deg, 0.9)
        accuracy = float(right.mean())
        return {
            "loss": 1.0 - accuracy, "accuracy": accuracy,
            "hub_accuracy": float(right[hubs].mean()),
            "val_accuracy": float(outputs.get("val_accuracy", float("nan"))),
            "n_nodes": float(truth.n), "n_edges": float(len(truth.edges)),
            "homophily": edge_homophily(truth.edges, truth.y),
        }


def record_to_sample(record: Mapping[str, Any]) -> Sample:
    """A cell record (``{"seed": 0, "n": 1000}``) as a sample with a stable id."""
    return cell_sample({"seed": int(record["seed"]), "n": int(record["n"])})


def _ns(ns: int | str | list[Any] | tuple[Any, ...]) -> list[int]:
    if isinstance(ns, int):
        return [ns]
    if isinstance(ns, str):
        return [int(v) for v in ns.split(",") if v.strip()]
    return [int(v) for v in ns]


@benchmark("hmh")
@task
def hmh(
    n_seeds: int = DEFAULT_N_SEEDS,
    ns: int | str | list[int] = DEFAULT_NS,
    homophily: float = DEFAULT_HOMOPHILY,
    ratio: int = 8,
    order: int = 3,
    method: str = DEFAULT_METHOD,
    baseline: str | None = DEFAULT_BASELINE,
    seed: int = DEFAULT_SEED,
    scale: float = 1.0,
    sandbox: str | None = None,
) -> Task:
    """HMH vs Chebyshev filters on heterophilous SBM graphs with hubs: accuracy and time.

    Args:
        n_seeds: Graphs per size.
        ns: Graph sizes (nodes).
        homophily: Expected fraction of intra-class edges (0.1: heterophilous).
        ratio: HMH's coarsening ratio per level.
        order: Chebyshev order K.
        method: The plain method scored (``hmh``, ``chebnet`` or ``gcn``).
        baseline: Run on the same graph too (or ``none``).
        seed: First graph's seed.
        scale: Multiplies every n (the data-size factor shared by method tasks).
        sandbox: ``bwrap`` to run the methods in the bubblewrap sandbox.
    """
    sizes = [max(int(round(v * scale)), 40) for v in _ns(ns)]
    records = [{"seed": seed + i, "n": v} for i in range(n_seeds) for v in sizes]
    config = {"ratio": ratio, "order": order}
    return method_task(
        name="hmh", family=FAMILY, problem=NodeClassificationProblem(homophily),
        samples=[record_to_sample(r) for r in records], method=method, baseline=baseline,
        version=VERSION, config=config, baseline_config=config, sandbox=sandbox,
        metadata={"paper": "https://github.com/sazzad1008/Scalable-HMH101"},
    )
