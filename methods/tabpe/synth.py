"""Tab-PE (our small reading) and the independent-marginals baseline, epsilon-DP.

Tab-PE (Tran et al., arXiv:2606.08259) extends Private Evolution to tables: a candidate
population evolves; each iteration every private record votes for its nearest candidate,
the vote histogram is privatised, the best-voted candidates are kept and varied by
tabular operators. Ours, in
numpy, pure epsilon-DP by basic composition (add/remove-one-record neighbours):

* a share ``init`` of epsilon buys noisy 1-way marginals (Laplace, L1 sensitivity d, the
  record is in every column's histogram); the first population of ``population`` rows is
  drawn from them;
* each of ``iterations`` rounds spends ``(1 - init) epsilon / iterations``: each record
  votes for its nearest candidate in Hamming distance (ties: the lowest index), the
  histogram gets Laplace(1 / eps_t) noise (sensitivity 1), and counts under a threshold of
  ``2 / eps_t`` are zeroed (PE's noise filter). Half of the next population are candidates
  drawn in proportion to the kept votes, half are such draws with ``mutate`` columns
  re-drawn from the noisy marginals (the variation operator);
* the output is ``n_syn`` rows drawn from the last population in proportion to its last
  noisy votes (post-processing).

Reference ``marginals``: the same noisy 1-way marginals with all of epsilon, each column
sampled independently (the task's first baseline; the paper's comparator, AIM, is
``methods/tabpe/aim.py`` and is the family's baseline since task 1.1.0).
Inputs: ``data`` (rows of integer codes), ``cards``, ``epsilon``,
``n_syn``. Outputs: ``synthetic`` (rows).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from harness.plugins.plain_method import plain_method

FAMILY = "dp_tabular"
IntArray = NDArray[np.int64]
Array = NDArray[np.float64]


def noisy_marginals(data: IntArray, cards: tuple[int, ...], epsilon: float,
                    rng: np.random.Generator) -> list[Array]:
    """Each column's histogram plus Laplace(d / epsilon) noise, clipped and normalised."""
    d = len(cards)
    out = []
    for j, c in enumerate(cards):
        counts = np.bincount(data[:, j], minlength=c).astype(float)
        counts += rng.laplace(scale=d / epsilon, size=c)
        counts = np.maximum(counts, 0.0)
        out.append(counts / counts.sum() if counts.sum() > 0 else np.full(c, 1.0 / c))
    return out


def sample_marginals(margs: list[Array], n: int, rng: np.random.Generator) -> IntArray:
    return np.column_stack([rng.choice(len(p), size=n, p=p) for p in margs]).astype(np.int64)


def onehot(rows: IntArray, cards: tuple[int, ...]) -> Array:
    offsets = np.concatenate([[0], np.cumsum(cards)[:-1]])
    out = np.zeros((len(rows), int(sum(cards))))
    out[np.arange(len(rows))[:, None], rows + offsets] = 1.0
    return out


def nearest(private: IntArray, candidates: IntArray, cards: tuple[int, ...]) -> IntArray:
    """Index of each private row's nearest candidate in Hamming distance."""
    matches = onehot(private, cards) @ onehot(candidates, cards).T
    return matches.argmax(axis=1).astype(np.int64)


def _inputs(inputs: Mapping[str, Any]) -> tuple[IntArray, tuple[int, ...], float, int]:
    data = np.asarray(inputs["data"], dtype=np.int64)
    cards = tuple(int(c) for c in inputs["cards"])
    return data, cards, float(inputs["epsilon"]), int(inputs.get("n_syn", len(data)))


@plain_method("marginals", family=FAMILY, role="reference")
def marginals(inputs: Mapping[str, Any], config: Mapping[str, Any],
              seed: int) -> dict[str, Any]:
    """Independent noisy 1-way marginals (all of epsilon), columns sampled independently."""
    data, cards, epsilon, n_syn = _inputs(inputs)
    rng = np.random.default_rng(seed)
    return {"synthetic": sample_marginals(noisy_marginals(data, cards, epsilon, rng), n_syn,
                                          rng)}


@plain_method("tab-pe", family=FAMILY)
def tab_pe(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """Private evolution on tables: privatised nearest-candidate votes, select, vary."""
    data, cards, epsilon, n_syn = _inputs(inputs)
    rng = np.random.default_rng(seed)
    size = int(config.get("population", 256))
    rounds = int(config.get("iterations", 5))
    init = float(config.get("init", 0.2))
    mutate = int(config.get("mutate", 1))
    margs = noisy_marginals(data, cards, init * epsilon, rng)
    population = sample_marginals(margs, size, rng)
    eps_t = (1.0 - init) * epsilon / rounds
    weights = np.full(size, 1.0 / size)
    for t in range(rounds):
        votes = np.bincount(nearest(data, population, cards), minlength=size).astype(float)
        votes += rng.laplace(scale=1.0 / eps_t, size=size)
        votes[votes < 2.0 / eps_t] = 0.0
        weights = votes / votes.sum() if votes.sum() > 0 else np.full(size, 1.0 / size)
        if t == rounds - 1:
            break
        parents = population[rng.choice(size, size=size, p=weights)]
        children = parents.copy()
        half = size // 2
        for i in range(half, size):  # vary the second half: re-draw `mutate` columns
            for j in rng.choice(len(cards), size=min(mutate, len(cards)), replace=False):
                children[i, j] = rng.choice(cards[j], p=margs[j])
        population = children
    return {"synthetic": population[rng.choice(size, size=n_syn, p=weights)],
            "population": size, "iterations": rounds}
