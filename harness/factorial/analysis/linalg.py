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


def absorbed_by_clusters(
    X: np.ndarray, term_cols: Sequence[int], clusters: np.ndarray, n_clusters: int
) -> bool:
    """Whether the clusters leave a term nothing to be tested on.

    True where the term's columns are constant within every cluster and the model's
    cluster-level columns (the intercept among them) span all ``n_clusters`` cluster means:
    no between-cluster residual is left, every cluster's score sum for the term is zero at
    the estimates, and the term's cluster-robust variance is only what leaks in from the
    other terms through the bread (a seed factor whose seeds are the items: chi2 ~1e3 from a
    logit fit, ~1e27 from rounding in a balanced least-squares fit). Structural, so the same
    on every machine; a cluster-level term with between-cluster residual left (a treatment
    assigned to 4 of 8 clusters) is tested as usual."""
    cols = list(term_cols)
    if not cols:
        return False
    counts = np.bincount(clusters, minlength=n_clusters).astype(float)
    means = cluster_sum(X, clusters, n_clusters) / np.maximum(counts, 1.0)[:, None]
    spread = np.abs(X - means[clusters]).max(axis=0)
    constant = spread <= 1e-9 * np.maximum(np.abs(X).max(axis=0), 1.0)
    if not constant[cols].all():
        return False
    present = counts > 0
    return int(np.linalg.matrix_rank(means[np.ix_(present, constant)])) >= int(present.sum())


def clustered_wald(b: np.ndarray, V: np.ndarray, idx: Sequence[int], X: np.ndarray,
                   clusters: np.ndarray, n_clusters: int,
                   reference: np.ndarray | None) -> tuple[float, int, bool]:
    """The cluster-robust Wald test both engines use: ``(chi2, rank, absorbed)``; a term
    the clusters absorb (:func:`absorbed_by_clusters`) has no test (``nan, 0, True``),
    any other is :func:`wald` against ``reference``."""
    if absorbed_by_clusters(X, idx, clusters, n_clusters):
        return float("nan"), 0, True
    chi2, rank = wald(b, V, idx, reference=reference)
    return chi2, rank, False


#: singular values of a Wald covariance below this share of its largest are zero. numpy's
#: default (``max(M, N) * eps``) sits at the level of rounding error itself: a contrast whose
#: cluster-robust variance is exactly zero (a level whose outcomes are constant in every
#: item, e.g. a cache that never hits at delta 0) comes out at ~1e-15 of the largest value,
#: counted on one BLAS build and not on another, and its 1/sigma weight then decided the
#: statistic (an F of 56.9 on one machine and 71.4 on another from the same logs).
WALD_RTOL = 1e-10


def _whitener(R: np.ndarray) -> np.ndarray | None:
    """``R^{-1/2}`` on R's range (None where R is zero): maps ``R`` to a projector."""
    R = (R + R.T) / 2
    vals, vecs = np.linalg.eigh(R)
    if not np.all(np.isfinite(vals)) or vals.max() <= 0:
        return None
    keep = vals > WALD_RTOL * vals.max()
    return np.asarray((vecs[:, keep] / np.sqrt(vals[keep])) @ vecs[:, keep].T)


def drop_zero_variance(b: np.ndarray, V: np.ndarray, reference: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``b`` and ``V`` with every coefficient of no sampling variance made exactly so, and
    the mask of those coefficients.

    The coefficient-table twin of :func:`wald`'s cut-off: a coefficient whose robust variance
    is below :data:`WALD_RTOL` times its model-based one (``reference``) has none. When
    every item shows the same difference between two levels, the cluster-robust variance of
    that contrast is rounding noise (se ~1e-18 beside an estimate of ~1e-18), and a ratio of
    the two gave t = 2.7, p = 0.014, for a difference that is exactly zero. Such a
    coefficient gets variance 0 (no test: its statistic and p are undefined) and, where the
    estimate itself is below the same cut-off on the model-based scale, estimate 0."""
    model_var = np.clip(np.diag(reference), 0.0, None)
    none = (model_var > 0) & (np.diag(V) <= WALD_RTOL * model_var)
    if not none.any():
        return b, V, none
    b, V = b.copy(), V.copy()
    V[none, :] = 0.0
    V[:, none] = 0.0
    b[none & (np.abs(b) <= np.sqrt(WALD_RTOL * model_var))] = 0.0
    return b, V, none


def varies_within(X: np.ndarray, clusters: np.ndarray, n_clusters: int) -> np.ndarray:
    """Per column of ``X``: whether it takes two values inside some cluster. A column that
    does not is cluster-level; where such a coefficient has no robust variance the clusters
    have absorbed it (nothing is left to estimate one), which is not the same as a contrast
    every cluster shows identically."""
    hi = np.full((n_clusters, X.shape[1]), -np.inf)
    lo = np.full((n_clusters, X.shape[1]), np.inf)
    np.maximum.at(hi, clusters, X)
    np.minimum.at(lo, clusters, X)
    return np.asarray(np.any(hi - lo > 0, axis=0))


def wald(b: np.ndarray, V: np.ndarray, idx: Sequence[int],
         reference: np.ndarray | None = None) -> tuple[float, int]:
    """Wald chi-square of ``b[idx] = 0`` and its rank, on the identifiable subspace.

    The rank and the generalised inverse share one relative cut-off (:data:`WALD_RTOL`), so
    directions with no sampling variance are left out of both, the same on every machine.

    ``reference`` (a model-based covariance of the same coefficients, e.g. ``mse (X'WX)^-1``)
    sets the scale against which a variance counts as zero. Without it the cut-off is
    relative to ``V``'s own largest value, which cannot see a ``V`` that is zero up to
    rounding in *every* direction: a term whose levels coincide with the clusters has a
    cluster-robust variance of ~1e-30, and the statistic came out near 1e27, a different
    number on every machine. Whitened by the reference, such directions have a variance
    ratio below the cut-off and leave the test (rank 0: no test)."""
    if not len(idx):
        return float("nan"), 0
    bt = b[list(idx)]
    Vt = V[np.ix_(list(idx), list(idx))]
    floor = 0.0
    if reference is not None:
        W = _whitener(reference[np.ix_(list(idx), list(idx))])
        if W is None:
            return float("nan"), 0
        # whitened, a direction's value is its robust / model-based variance ratio, so a
        # ratio below WALD_RTOL is zero however small the whole matrix is
        bt, Vt, floor = W @ bt, W @ Vt @ W, 1.0
    Vt = (Vt + Vt.T) / 2  # symmetric up to rounding; make it exactly so for eigh/pinv
    sv = np.linalg.svd(Vt, compute_uv=False)
    if not np.all(np.isfinite(sv)) or sv.max() <= 0:
        return float("nan"), 0
    cut = WALD_RTOL * max(floor, float(sv.max()))
    rank = int(np.sum(sv > cut))
    if rank == 0:
        return float("nan"), 0
    inv = np.linalg.pinv(Vt, rcond=cut / float(sv.max()), hermitian=True)
    return float(bt @ inv @ bt), rank

