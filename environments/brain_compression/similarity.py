"""Representational similarity between two models' representations of the same sentences.

* :func:`linear_cka`: linear centred kernel alignment (Kornblith et al. 2019) of two
  ``[n, d]`` matrices, 1 when one is an orthogonal transform and scaling of the other;
* :func:`rsa`: Spearman's rho between the upper triangles of the two representational
  dissimilarity matrices (1 - Pearson r between sentences), the measure of neuroscience's
  representational similarity analysis.

What they stand in for: an encoding model of fMRI responses is a (regularised) linear map
from a model's features; features that are nearly a linear transform of the uncompressed
model's (CKA near 1) leave such a map's predictions nearly unchanged. That is an argument
about a bound, not a measurement of brain predictivity.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def linear_cka(a: NDArray[np.floating], b: NDArray[np.floating]) -> float:
    """Linear CKA of ``a`` and ``b`` (same rows), in [0, 1]."""
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    x = x - x.mean(axis=0)
    y = y - y.mean(axis=0)
    cross = float(np.linalg.norm(y.T @ x) ** 2)
    norm = float(np.linalg.norm(x.T @ x) * np.linalg.norm(y.T @ y))
    return cross / norm if norm > 0 else float("nan")


def rdm(a: NDArray[np.floating]) -> NDArray[np.float64]:
    """Representational dissimilarity matrix: 1 - Pearson r between rows."""
    out: NDArray[np.float64] = np.subtract(1.0, np.corrcoef(np.asarray(a, dtype=np.float64)))
    return out


def _ranks(v: NDArray[np.float64]) -> NDArray[np.float64]:
    order = np.argsort(v, kind="mergesort")
    ranks = np.empty(len(v))
    ranks[order] = np.arange(len(v), dtype=np.float64)
    return ranks


def rsa(a: NDArray[np.floating], b: NDArray[np.floating]) -> float:
    """Spearman's rho between the RDMs' upper triangles of ``a`` and ``b``."""
    iu = np.triu_indices(len(a), k=1)
    ra, rb = _ranks(rdm(a)[iu]), _ranks(rdm(b)[iu])
    return float(np.corrcoef(ra, rb)[0, 1])
