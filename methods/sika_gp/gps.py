"""Exact GP, an inducing-point GP and a SIKA-style sparse dyadic template basis GP (1-D).

SIKA-GP (ICML 2026) accelerates GP inference with sparse inducing kernel approximations on
a dyadic ordered template basis, so each input activates only O(log M) of the M basis
functions. Our reading at this scale, not the paper's code:

* ``gp-exact``: RBF kernel, Cholesky of the N x N Gram matrix, O(N^3).
* ``gp-inducing``: the deterministic training conditional (DTC/SoR) with M inducing
  points on a grid, RBF kernel, O(N M^2).
* ``sika``: a hierarchy of dyadic hat functions (level l has 2^l + 1 hats of half-width
  2^-l; levels 0..L with about M functions in all); each input activates two per level,
  i.e. O(log M) nonzeros per row of the sparse feature matrix. The prior variance of level
  l decays as 2^(-alpha l). Inference is Bayesian linear regression with the sparse
  features: a sparse M x M precision, factorised by SuperLU.

Every method picks its hyperparameters (length scale or decay, noise) from the same small
grid by its own log marginal likelihood. Inputs: ``x``, ``y``, ``x_test``; config: ``m``
(inducing points / basis size). Outputs: predictive ``mean`` and ``var`` (of a noisy
observation) at ``x_test``, the chosen hyperparameters, and ``fit_s`` / ``predict_s``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numpy.typing import NDArray

from harness.plugins.plain_method import plain_method

FAMILY = "gp_regression"
Array = NDArray[np.float64]
LENGTHSCALES = (0.02, 0.05, 0.1, 0.2)
NOISE_SHARES = (0.01, 0.05)  # noise variance as a share of var(y)
DECAYS = (0.5, 1.0, 1.5, 2.0)


def rbf(a: Array, b: Array, ell: float, var: float) -> Array:
    return var * np.exp(-0.5 * (a[:, None] - b[None, :]) ** 2 / ell**2)


def _exact_fit(x: Array, y: Array, ell: float, s2: float, n2: float) -> tuple[float, Any]:
    K = rbf(x, x, ell, s2) + n2 * np.eye(len(x))
    L = sla.cho_factor(K, lower=True)
    alpha = sla.cho_solve(L, y)
    logdet = 2.0 * float(np.log(np.diag(L[0])).sum())
    lml = -0.5 * float(y @ alpha) - 0.5 * logdet - 0.5 * len(y) * math.log(2 * math.pi)
    return lml, (L, alpha)


@plain_method("gp-exact", family=FAMILY, role="reference")
def exact_gp(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """Exact GP regression (RBF), hyperparameters by marginal likelihood on a grid."""
    x, y, xt = (np.asarray(inputs[k], dtype=float) for k in ("x", "y", "x_test"))
    mu, s2 = float(y.mean()), float(y.var())
    yc = y - mu
    t0 = time.perf_counter()
    best = max(((_exact_fit(x, yc, ell, s2, share * s2), ell, share)
                for ell in LENGTHSCALES for share in NOISE_SHARES), key=lambda r: r[0][0])
    (_, (L, alpha)), ell, share = best
    fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    Ks = rbf(xt, x, ell, s2)
    mean = Ks @ alpha + mu
    v = sla.cho_solve(L, Ks.T)
    var = s2 - np.einsum("ij,ji->i", Ks, v) + share * s2
    return {"mean": mean, "var": np.maximum(var, 1e-12), "fit_s": fit,
            "predict_s": time.perf_counter() - t0, "lengthscale": ell, "m": float(len(x))}


def _dtc(x: Array, y: Array, z: Array, ell: float, s2: float, n2: float) -> tuple[float, Any]:
    Kuu = rbf(z, z, ell, s2) + 1e-6 * s2 * np.eye(len(z))
    Kuf = rbf(z, x, ell, s2)
    Luu = np.linalg.cholesky(Kuu)
    V = sla.solve_triangular(Luu, Kuf, lower=True)            # M x N
    B = np.eye(len(z)) + (V @ V.T) / n2
    LB = np.linalg.cholesky(B)
    c = sla.solve_triangular(LB, V @ y, lower=True) / n2
    n = len(y)
    # log N(y | 0, Q + n2 I) by Woodbury / the determinant lemma
    lml = (-0.5 * (float(y @ y) / n2 - float(c @ c) * n2 * 1.0)
           - float(np.log(np.diag(LB)).sum()) - 0.5 * n * math.log(n2)
           - 0.5 * n * math.log(2 * math.pi))
    return lml, (Luu, LB, c)


@plain_method("gp-inducing", family=FAMILY, role="baseline")
def inducing_gp(inputs: Mapping[str, Any], config: Mapping[str, Any],
                seed: int) -> dict[str, Any]:
    """DTC inducing-point GP with M grid inducing points (RBF), O(N M^2)."""
    x, y, xt = (np.asarray(inputs[k], dtype=float) for k in ("x", "y", "x_test"))
    m = int(config["m"])
    mu, s2 = float(y.mean()), float(y.var())
    yc = y - mu
    z = np.linspace(float(x.min()), float(x.max()), m)
    t0 = time.perf_counter()
    best = max(((_dtc(x, yc, z, ell, s2, share * s2), ell, share)
                for ell in LENGTHSCALES for share in NOISE_SHARES), key=lambda r: r[0][0])
    (_, (Luu, LB, c)), ell, share = best
    fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    Vs = sla.solve_triangular(Luu, rbf(z, xt, ell, s2), lower=True)   # M x T
    W = sla.solve_triangular(LB, Vs, lower=True)
    mean = W.T @ c + mu
    # DTC predictive variance: k** - q** + the posterior part, plus noise
    var = s2 - (Vs**2).sum(0) + (W**2).sum(0) + share * s2
    return {"mean": mean, "var": np.maximum(var, 1e-12), "fit_s": fit,
            "predict_s": time.perf_counter() - t0, "lengthscale": ell, "m": float(m)}


def dyadic_levels(m: int) -> int:
    """The deepest level L whose hierarchy (sum of 2^l + 1 for l <= L) stays within m."""
    total, level = 0, -1
    while total + 2 ** (level + 1) + 1 <= m:
        level += 1
        total += 2**level + 1
    return max(level, 0)


def dyadic_features(x: Array, levels: int, lo: float, hi: float) -> tuple[sp.csr_matrix, Array]:
    """Sparse hat-function features (N x M) and each column's level."""
    u = np.clip((x - lo) / (hi - lo), 0.0, 1.0)
    rows, cols, vals, level_of = [], [], [], []
    offset = 0
    n = len(u)
    for level in range(levels + 1):
        count = 2**level + 1
        pos = u * 2**level
        left = np.minimum(np.floor(pos).astype(np.int64), count - 2)
        frac = pos - left
        rows += [np.arange(n), np.arange(n)]
        cols += [offset + left, offset + left + 1]
        vals += [1.0 - frac, frac]
        level_of += [level] * count
        offset += count
    phi = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                        shape=(n, offset))
    return phi, np.asarray(level_of, dtype=float)


def _sika_fit(phi: sp.csr_matrix, y: Array, levels: Array, decay: float, s2: float,
              n2: float) -> tuple[float, Any]:
    prior = s2 * 2.0 ** (-decay * levels)
    A = (phi.T @ phi) / n2 + sp.diags(1.0 / prior)
    lu = spla.splu(A.tocsc())
    b = phi.T @ y / n2
    w = lu.solve(b)
    n = len(y)
    logdet_a = float(np.log(np.abs(lu.U.diagonal())).sum())
    # log N(y | 0, Phi S Phi' + n2 I) = -1/2 [y'y/n2 - b'w + log|A| + log|S| + n log n2 + n log 2pi]
    lml = -0.5 * (float(y @ y) / n2 - float(b @ w) + logdet_a + float(np.log(prior).sum())
                  + n * math.log(n2) + n * math.log(2 * math.pi))
    return lml, (lu, w)


@plain_method("sika", family=FAMILY)
def sika_gp(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """Sparse dyadic template-basis GP: O(log M) active basis functions per input."""
    x, y, xt = (np.asarray(inputs[k], dtype=float) for k in ("x", "y", "x_test"))
    m = int(config["m"])
    mu, s2 = float(y.mean()), float(y.var())
    yc = y - mu
    lo, hi = float(min(x.min(), xt.min())), float(max(x.max(), xt.max()))
    t0 = time.perf_counter()
    n_levels = dyadic_levels(m)
    phi, levels = dyadic_features(x, n_levels, lo, hi)
    best = max(((_sika_fit(phi, yc, levels, decay, s2, share * s2), decay, share)
                for decay in DECAYS for share in NOISE_SHARES), key=lambda r: r[0][0])
    (_, (lu, w)), decay, share = best
    fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    phis, _ = dyadic_features(xt, n_levels, lo, hi)
    mean = phis @ w + mu
    cov = lu.solve(phis.T.toarray())                       # M x T
    var = np.asarray(phis.multiply(cov.T).sum(1)).ravel() + share * s2
    return {"mean": mean, "var": np.maximum(var, 1e-12), "fit_s": fit,
            "predict_s": time.perf_counter() - t0, "decay": decay,
            "m": float(phi.shape[1]), "nnz_per_row": float(phi.nnz / phi.shape[0])}
