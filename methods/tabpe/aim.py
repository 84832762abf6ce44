"""AIM, the paper's comparator, in a small faithful form: select-measure-generate under zCDP.

AIM (McKenna, Mullins, Sheldon and Miklau, "AIM: An Adaptive and Iterative Mechanism for
Differentially Private Synthetic Data", VLDB 2022) is the baseline Tab-PE reports beating
("Compared to the best baseline -- AIM, Tab-PE improves classification accuracy by up to
10%"). No maintained package with AIM installs into this venv without a heavy change:
``mbi`` 2.x (Private-PGM) ships the estimator but not the AIM mechanism and needs jax;
``smartnoise-synth`` (which ships AIM) pins ``opacus<0.15`` and ``mbi<2`` and pulls jax,
pandas and SQL dependencies into the shared environment. So this module implements AIM's
algorithm itself, step for step, on the small domains of this task:

* workload ``W``: all ``degree``-way marginals (AIM's standard workload is 3-way), weight 1;
  candidates: its downward closure, each weighted ``w_r = sum_{s in W} |r & s|``;
* rho-zCDP with ``T = 16 d`` planned rounds and ``alpha = 0.9``: all 1-way marginals are
  measured first with Gaussian noise ``sigma_0 = sqrt(T / (2 alpha rho))``; each round
  selects a candidate by the exponential mechanism (``eps = sqrt(8 (1 - alpha) rho / T)``,
  sensitivity ``max w_r``, cost ``eps^2 / 8``) on the quality
  ``w_r (||M_r(D) - M_r(p)||_1 - sqrt(2/pi) sigma n_r)``, measures it with Gaussian noise
  (cost ``1 / (2 sigma^2)``), re-estimates the model, and halves ``sigma`` (doubling
  ``eps``) when the new estimate moved ``M_r`` by less than the noise's expected L1 size;
  the last round spends exactly what is left;
* the generator: the distribution that minimises AIM's (Private-PGM's) estimation loss
  ``sum_r ||M_r(p) - y_r||^2 / sigma_r^2``. Private-PGM represents ``p`` as a graphical
  model over the measured cliques; the task's domains are small (256 cells for parity,
  13,122 for the binned survey), so ``p`` is held as the full joint table and fitted by
  the same entropic mirror descent from the uniform table (warm-started every round), which
  reaches the loss Private-PGM reaches without its junction-tree machinery. Synthetic rows
  are drawn from ``p`` (post-processing). No model-size limit is needed at these sizes.

Privacy: pure epsilon-DP (what Tab-PE and ``marginals`` satisfy here) implies
``epsilon^2 / 2``-zCDP, so AIM runs at ``rho = epsilon^2 / 2``: at least the budget Tab-PE
has, a comparison that favours AIM. The record count ``n`` is treated as public, as the
task's ``n_syn`` already is. Inputs: ``data``, ``cards``, ``epsilon``, ``n_syn``. Config:
``degree`` (workload order, default 3), ``iters`` (mirror-descent steps per round).
Outputs: ``synthetic`` rows, the number of ``rounds`` and ``measured`` marginals, and
``rho_spent`` (the composed zCDP cost, equal to ``rho`` up to rounding).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from harness.plugins.plain_method import plain_method

FAMILY = "dp_tabular"
Array = NDArray[np.float64]
IntArray = NDArray[np.int64]
Clique = tuple[int, ...]


@dataclass(frozen=True)
class Measurement:
    """A noisy marginal: the clique, its noisy counts and the noise's standard deviation."""

    clique: Clique
    y: Array
    sigma: float


def marginal(table: Array, clique: Clique) -> Array:
    """The marginal of a full joint table (any non-negative weights) on ``clique``."""
    other = tuple(a for a in range(table.ndim) if a not in clique)
    return table.sum(axis=other).ravel() if other else table.ravel()


def data_marginal(data: IntArray, cards: tuple[int, ...], clique: Clique) -> Array:
    """The counts of ``data`` on ``clique`` (C order over the clique's columns)."""
    shape = [cards[c] for c in clique]
    flat = np.ravel_multi_index(data[:, list(clique)].T, shape)
    return np.bincount(flat, minlength=int(np.prod(shape))).astype(float)


def cell_index(cards: tuple[int, ...], clique: Clique) -> IntArray:
    """For every cell of the full table (C order), its cell in the marginal on ``clique``."""
    grid = np.indices(cards).reshape(len(cards), -1)
    flat = np.ravel_multi_index(tuple(grid[list(clique)]), [cards[c] for c in clique])
    return np.asarray(flat, dtype=np.int64)


def estimate(measurements: list[Measurement], cards: tuple[int, ...], total: float,
             start: Array | None = None, iters: int = 150) -> Array:
    """Private-PGM's estimate over the full table: entropic mirror descent on
    ``sum_r ||total * M_r(p) - y_r||^2 / (2 sigma_r^2)`` over the simplex, step ``1 / L``
    with ``L = total^2 sum_r 1 / sigma_r^2`` (the loss's curvature in the L1 geometry).
    Repeated measurements of one clique are pooled first (precision-weighted), which
    leaves the loss's minimiser unchanged."""
    pooled: dict[Clique, tuple[Array, float]] = {}
    for m in measurements:
        y, prec = pooled.get(m.clique, (np.zeros_like(m.y), 0.0))
        pooled[m.clique] = (y + m.y / m.sigma**2, prec + 1.0 / m.sigma**2)
    terms = [(cell_index(cards, c), y / prec, prec) for c, (y, prec) in pooled.items()]
    size = int(np.prod(cards))
    p = np.full(size, 1.0 / size) if start is None else start.ravel().copy()
    step = 1.0 / (total**2 * sum(prec for _, _, prec in terms))
    for _ in range(iters):
        grad = np.zeros(size)
        for idx, y, prec in terms:
            fitted = np.bincount(idx, weights=p, minlength=y.size)
            grad += (total * prec) * (total * fitted - y)[idx]
        logits = np.log(np.maximum(p, 1e-300)) - step * grad
        p = np.exp(logits - logits.max())
        p /= p.sum()
    return p.reshape(cards)


def workload(d: int, degree: int) -> tuple[list[Clique], dict[Clique, float]]:
    """The ``degree``-way workload and its downward closure with AIM's weights."""
    degree = min(degree, d)
    work = list(itertools.combinations(range(d), degree))
    closure = [c for k in range(1, degree + 1) for c in itertools.combinations(range(d), k)]
    weights = {r: float(sum(len(set(r) & set(s)) for s in work)) for r in closure}
    return work, weights


def aim_synthesize(data: IntArray, cards: tuple[int, ...], rho: float, n_syn: int,
                   rng: np.random.Generator, degree: int = 3,
                   iters: int = 150) -> tuple[IntArray, int, int, float]:
    """AIM at ``rho``-zCDP: (synthetic rows, rounds run, marginals measured, rho spent)."""
    d = len(cards)
    total = float(len(data))
    _, weights = workload(d, degree)
    rounds_planned = 16 * d
    alpha = 0.9
    sigma = math.sqrt(rounds_planned / (2 * alpha * rho))
    eps = math.sqrt(8 * (1 - alpha) * rho / rounds_planned)
    truth = {r: data_marginal(data, cards, r) for r in weights}
    measurements = []
    used = 0.0
    for j in range(d):
        counts = truth[(j,)]
        measurements.append(Measurement((j,), counts + rng.normal(0, sigma, counts.size), sigma))
        used += 1.0 / (2 * sigma**2)
    p = estimate(measurements, cards, total, iters=iters)
    rounds = 0
    terminate = False
    while not terminate:
        left = rho - used
        if left <= 2 * (1.0 / (2 * sigma**2) + eps**2 / 8):
            sigma = math.sqrt(1.0 / (2 * alpha * left))
            eps = math.sqrt(8 * (1 - alpha) * left)
            terminate = True
        cliques = list(weights)
        bias = math.sqrt(2 / math.pi) * sigma
        quality = np.array([weights[r] * (np.abs(truth[r] - total * marginal(p, r)).sum()
                                          - bias * truth[r].size) for r in cliques])
        sens = max(weights.values())
        logits = eps * quality / (2 * sens)
        prob = np.exp(logits - logits.max())
        chosen = cliques[int(rng.choice(len(cliques), p=prob / prob.sum()))]
        used += eps**2 / 8 + 1.0 / (2 * sigma**2)
        counts = truth[chosen]
        measurements.append(Measurement(chosen, counts + rng.normal(0, sigma, counts.size),
                                        sigma))
        before = total * marginal(p, chosen)
        p = estimate(measurements, cards, total, start=p, iters=iters)
        rounds += 1
        moved = np.abs(total * marginal(p, chosen) - before).sum()
        if moved <= bias * counts.size and not terminate:
            sigma /= 2
            eps *= 2
    flat = rng.choice(p.size, size=n_syn, p=p.ravel())
    rows = np.column_stack(np.unravel_index(flat, cards)).astype(np.int64)
    return rows, rounds, len(measurements), used


@plain_method("aim", family=FAMILY, role="baseline")
def aim(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """AIM (the paper's comparator): adaptive select-measure-generate at rho = eps^2 / 2."""
    data = np.asarray(inputs["data"], dtype=np.int64)
    cards = tuple(int(c) for c in inputs["cards"])
    epsilon = float(inputs["epsilon"])
    n_syn = int(inputs.get("n_syn", len(data)))
    rows, rounds, measured, spent = aim_synthesize(
        data, cards, epsilon**2 / 2, n_syn, np.random.default_rng(seed),
        degree=int(config.get("degree", 3)), iters=int(config.get("iters", 150)))
    return {"synthetic": rows, "rounds": rounds, "measured": measured, "rho_spent": spent,
            "rho": epsilon**2 / 2}
