"""MetaMoE: a router for privately trained experts, trained on diversity-aware public proxies
vs relevance-only proxies; routed accuracy on the mixed test set.

MetaMoE (ICML 2026), https://github.com/ws-jiang/MetaMoE; abstract in the suite's papers
(``../shared/papers/``): "diversity-aware proxy selection, which selects client-domain-
relevant and diverse samples from public data to effectively approximate private data
distributions and supervise router learning". Each sample is a cell (seed): a seeded
federation from ``environments/metamoe`` (6 clients, each a private multi-modal domain with
its own labelling rule, an expert trained on it; a public pool of 4,000 unlabelled points,
30% from domains no client owns; 1,200 test points, every domain equally). A method sees the
private data (to simulate each client), the pool and the test inputs, and returns a label
and a chosen client per test point; it is scored by accuracy, routing accuracy (chosen
client = the point's true domain) and proxy precision (share of a client's proxies drawn
from its own domain). The baseline runs on the same federation.

    inspect eval harness/metamoe --model none
    inspect eval harness/metamoe --model none -T method=random-proxies -T baseline=uniform-ensemble
    harness method tasks --keys accuracy,routing_accuracy,proxy_precision logs/
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from inspect_ai import Task, task
from inspect_ai.dataset import Sample

from environments.metamoe import make_federation
from harness.method_tasks import cell_sample, method_task
from harness.plugins.benchmark import benchmark

DEFAULT_N_SEEDS = 20
DEFAULT_CLIENTS = 6
DEFAULT_PROXIES = 20
DEFAULT_METHOD = "metamoe"
DEFAULT_BASELINE = "relevance-proxies"
DEFAULT_SEED = 100  # seeds 0-3 were used while choosing the world and the defaults
FAMILY = "private_moe"
VERSION = "1.0.0"


class FederationProblem:
    """Cells are (seed, clients); the truth is the test labels and domains."""

    def __init__(self, n_public: int = 4000) -> None:
        self.n_public = n_public

    def prepare(self, cell: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
        fed = make_federation(clients=int(cell["clients"]), n_public=self.n_public,
                              seed=int(cell["seed"]))
        inputs = {"private_x": fed.private_x, "private_y": fed.private_y,
                  "public_x": fed.public_x, "test_x": fed.test_x}
        return inputs, fed

    def score(self, outputs: Mapping[str, Any], truth: Any,
              cell: Mapping[str, Any]) -> dict[str, float]:
        pred = np.asarray(outputs["pred"])
        route = np.asarray(outputs["route"])
        acc = float((pred == truth.test_y).mean())
        scores = {"loss": 1.0 - acc, "accuracy": acc,
                  "routing_accuracy": float((route == truth.test_domain).mean())}
        selected = outputs.get("selected") or []
        if selected:
            hits = [float((truth.public_domain[np.asarray(s, dtype=int)] == k).mean())
                    for k, s in enumerate(selected)]
            scores["proxy_precision"] = float(np.mean(hits))
        return scores


def record_to_sample(record: Mapping[str, Any]) -> Sample:
    """A cell record (``{"seed": 100, "clients": 6}``) as a sample with a stable id."""
    return cell_sample({"seed": int(record["seed"]), "clients": int(record["clients"])})


@benchmark("metamoe")
@task
def metamoe(
    n_seeds: int = DEFAULT_N_SEEDS,
    clients: int = DEFAULT_CLIENTS,
    m: int = DEFAULT_PROXIES,
    diversity: float = 1.0,
    method: str = DEFAULT_METHOD,
    baseline: str | None = DEFAULT_BASELINE,
    seed: int = DEFAULT_SEED,
    scale: float = 1.0,
    sandbox: str | None = None,
) -> Task:
    """MetaMoE's diversity-aware proxies vs relevance-only proxies for the router.

    Args:
        n_seeds: Federations (one per seed).
        clients: Clients (private domains, experts) per federation.
        m: Proxies each client selects from the public pool.
        diversity: Weight of spread against relevance in MetaMoE's selection.
        method: The plain method scored (``metamoe``, ``relevance-proxies``,
            ``random-proxies``, ``uniform-ensemble``, or ``paper`` / ``baseline``).
        baseline: Run on the same federation too (or ``none``).
        seed: First federation's seed.
        scale: Multiplies the public pool's size (4,000) (the data-size factor).
        sandbox: ``bwrap`` to run the methods in the bubblewrap sandbox.
    """
    records = [{"seed": seed + i, "clients": clients} for i in range(n_seeds)]
    config = {"m": m, "diversity": diversity}
    return method_task(
        name="metamoe", family=FAMILY,
        problem=FederationProblem(n_public=max(int(round(4000 * scale)), 10 * m * clients)),
        samples=[record_to_sample(r) for r in records], method=method, baseline=baseline,
        version=VERSION, config=config, baseline_config=config, sandbox=sandbox,
        metadata={"paper": "https://github.com/ws-jiang/MetaMoE"},
    )
