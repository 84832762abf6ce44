"""A synthetic activation model with known compositions: the data on which a decoder with
interaction terms must reconstruct better than a linear one at the same L0.

``x = D z + sum_{(i, j) in P} z_i z_j v_ij + noise``: ``m`` unit-norm atoms ``D``, each
token with ``k`` active features (values in [0.5, 1.5]); for every composed pair (i, j) a
direction ``v_ij`` appears only when both are active, with norm ``strength``. The composed
pairs are drawn among features that co-occur more than chance, and as many uncomposed pairs
are made to co-occur just as often (so co-occurrence alone does not mark a composition).
Fixed by the seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray


@dataclass(frozen=True)
class SyntheticActivations:
    """Train and test activations, and the truth (atoms, codes, composed pairs)."""

    train: NDArray[np.float32]
    test: NDArray[np.float32]
    atoms: NDArray[np.float64]
    composed: NDArray[np.int64]
    """Composed feature pairs, ``[n_pairs, 2]``."""
    cooccurring: NDArray[np.int64]
    """Pairs made to co-occur as often as the composed ones, without a composition."""


def _codes(n: int, m: int, k: int, pairs: NDArray[np.int64], p_pair: float,
           rng: np.random.Generator) -> NDArray[np.float64]:
    z = np.zeros((n, m))
    rows = np.arange(n)[:, None]
    idx = np.argsort(rng.random((n, m)), axis=1)[:, :k]
    z[rows, idx] = rng.uniform(0.5, 1.5, size=(n, k))
    # each listed pair fires together on a share p_pair of the tokens
    on = rng.random((n, len(pairs))) < p_pair
    for col, (i, j) in enumerate(pairs):
        hit = np.flatnonzero(on[:, col])
        z[hit, i] = rng.uniform(0.5, 1.5, size=len(hit))
        z[hit, j] = rng.uniform(0.5, 1.5, size=len(hit))
    return z


def synthetic_activations(seed: int = 0, *, n_train: int = 6000, n_test: int = 1500,
                          d: int = 32, m: int = 64, k: int = 3, n_pairs: int = 8,
                          strength: float = 1.5, noise: float = 0.02,
                          p_pair: float = 0.15) -> SyntheticActivations:
    """Seeded activations with ``n_pairs`` composed and ``n_pairs`` merely co-occurring
    feature pairs (disjoint features)."""
    rng = np.random.default_rng(seed)
    atoms = rng.normal(size=(m, d))
    atoms /= np.linalg.norm(atoms, axis=1, keepdims=True)
    chosen = rng.permutation(m)[: 4 * n_pairs].reshape(2 * n_pairs, 2)
    composed, cooccurring = chosen[:n_pairs], chosen[n_pairs:]
    extra = rng.normal(size=(n_pairs, d))
    extra *= strength / np.linalg.norm(extra, axis=1, keepdims=True)
    both = np.concatenate([composed, cooccurring])

    def make(n: int) -> NDArray[np.float32]:
        z = _codes(n, m, k, both, p_pair, rng)
        x = z @ atoms
        x += (z[:, composed[:, 0]] * z[:, composed[:, 1]]) @ extra
        x += noise * rng.normal(size=x.shape)
        return x.astype(np.float32)

    return SyntheticActivations(make(n_train), make(n_test), atoms, composed.astype(np.int64),
                                cooccurring.astype(np.int64))
