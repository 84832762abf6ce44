"""A federation of clients, each with a private domain, and a public pool of unlabelled data.

MetaMoE (ICML 2026, github.com/ws-jiang/MetaMoE) unifies experts trained on private client domains
into one mixture of experts, with a router trained on *public proxy data* chosen to stand
in for each client's inaccessible data. The claim under test is about that choice, so the
world has what makes it matter:

* each domain is **multi-modal** (``modes`` Gaussian sub-clusters of unequal weight around
  the domain's centre), so a proxy set that covers only a domain's densest mode misses part
  of what the router must learn to send to that client;
* each domain has **its own labelling rule** (a random linear rule through its centre), so
  an expert is good on its own domain and near chance on the others, and routing decides
  accuracy;
* the public pool mixes samples of every client domain with **distractors** from domains
  no client owns (a random proxy is often irrelevant).

The test set draws every client domain equally. Everything is seeded.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]


@dataclass(frozen=True)
class Federation:
    """Private data per client, the public pool, and the mixed, labelled test set."""

    private_x: list[Array]
    private_y: list[NDArray[np.int64]]
    public_x: Array
    public_domain: NDArray[np.int64]  # hidden truth: -1 for distractors
    test_x: Array
    test_y: NDArray[np.int64]
    test_domain: NDArray[np.int64]


def _domain(rng: np.random.Generator, dim: int, modes: int, spread: float,
            mode_scale: float) -> tuple[Array, Array, Array, Array]:
    centre = rng.normal(size=dim) * spread
    offsets = rng.normal(size=(modes, dim)) * mode_scale
    weights = np.sort(rng.dirichlet(np.full(modes, 1.0)))[::-1]
    rule = rng.normal(size=dim)
    return centre, centre + offsets, weights, rule / np.linalg.norm(rule)


def _draw(rng: np.random.Generator, count: int, domain: tuple[Array, Array, Array, Array],
          noise: float) -> tuple[Array, NDArray[np.int64]]:
    centre, means, weights, rule = domain
    which = rng.choice(len(weights), size=count, p=weights)
    x = means[which] + rng.normal(size=(count, len(centre))) * noise
    margin = (x - centre) @ rule + rng.normal(size=count) * 0.1 * noise
    return x, (margin > 0).astype(np.int64)


def make_federation(*, clients: int = 6, dim: int = 16, modes: int = 3, n_private: int = 300,
                    n_public: int = 4000, distractor_share: float = 0.3, n_test: int = 1200,
                    spread: float = 1.0, mode_scale: float = 3.0, noise: float = 1.0,
                    seed: int = 0) -> Federation:
    """A seeded federation: ``clients`` private domains (+ as many distractor domains)."""
    rng = np.random.default_rng(seed)
    domains = [_domain(rng, dim, modes, spread, mode_scale) for _ in range(2 * clients)]
    private = [_draw(rng, n_private, domains[k], noise) for k in range(clients)]
    n_distract = int(round(distractor_share * n_public))
    owned = rng.integers(0, clients, size=n_public - n_distract)
    foreign = rng.integers(clients, 2 * clients, size=n_distract)
    public_domain = np.concatenate([owned, foreign])
    public_x = np.empty((n_public, dim))
    for k in range(2 * clients):
        where = np.flatnonzero(public_domain == k)
        public_x[where] = _draw(rng, len(where), domains[k], noise)[0]
    order = rng.permutation(n_public)
    test_domain = np.repeat(np.arange(clients), n_test // clients)
    test = [_draw(rng, int((test_domain == k).sum()), domains[k], noise) for k in range(clients)]
    return Federation(
        private_x=[x for x, _ in private], private_y=[y for _, y in private],
        public_x=public_x[order], public_domain=np.where(public_domain[order] < clients,
                                                         public_domain[order], -1),
        test_x=np.vstack([x for x, _ in test]), test_y=np.concatenate([y for _, y in test]),
        test_domain=test_domain,
    )
