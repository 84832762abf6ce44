"""Linear algebra on aggregated rows: weighted least squares, absorption, sandwich, Wald.

Why separate: both engines need the same cluster-robust covariances and Wald tests.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from scipy import sparse


def wls(X: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    sw = np.sqrt(w)
    b, _, rank, _ = np.linalg.lstsq(X * sw[:, None], y * sw, rcond=None)
    return b, y - X @ b, int(rank)


def demeaner(
    groups: np.ndarray, w: np.ndarray, n_groups: int
) -> Callable[[np.ndarray], np.ndarray]:
    """Weighted within-group demeaning (absorbs a fixed block exactly, by FWL)."""
    rows = np.arange(len(groups))
    D = sparse.csr_matrix((w, (groups, rows)), shape=(n_groups, len(groups)))
    wsum = np.asarray(D.sum(axis=1)).ravel()

    def apply(M: np.ndarray) -> np.ndarray:
        means = (D @ M) / (wsum[:, None] if M.ndim == 2 else wsum)
        return M - means[groups]

    return apply


def cluster_sum(scores: np.ndarray, clusters: np.ndarray, n_clusters: int) -> np.ndarray:
    out = np.zeros((n_clusters, scores.shape[1]))
    np.add.at(out, clusters, scores)
    return out


def sandwich(
    bread: np.ndarray, scores: np.ndarray, clusters: np.ndarray, n_obs: int, rank: int
) -> np.ndarray:
    """Cluster-robust covariance with the usual G/(G-1) (N-1)/(N-K) correction."""
    n_clusters = int(clusters.max()) + 1
    summed = cluster_sum(scores, clusters, n_clusters)
    meat = summed.T @ summed
    corr = n_clusters / (n_clusters - 1) * (n_obs - 1) / max(n_obs - rank, 1)
    return np.asarray(corr * bread @ meat @ bread)


def wald(b: np.ndarray, V: np.ndarray, idx: Sequence[int]) -> tuple[float, int]:
    bt = b[list(idx)]
    Vt = V[np.ix_(list(idx), list(idx))]
    rank = int(np.linalg.matrix_rank(Vt)) if len(idx) else 0
    if rank == 0:
        return float("nan"), 0
    return float(bt @ np.linalg.pinv(Vt) @ bt), rank

