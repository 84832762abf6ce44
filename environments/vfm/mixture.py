"""A seeded 2-D Gaussian-mixture prior and a noisy linear measurement of it, with the exact
posterior in closed form (the VFM method task's world).

Why a mixture: its posterior under a linear-Gaussian measurement is again a mixture with
known weights, means and covariance, so a conditional sampler's samples can be compared
with exact posterior samples (energy distance), its per-mode mass with the exact mode
weights, and its intervals with the hidden truth (coverage), with no learned judge.

Prior: ``K`` isotropic components ``N(mu_k, s^2 I)`` on a jittered ring, Dirichlet weights.
Measurement: ``y = A x + e``, ``e ~ N(0, sigma^2 I_m)``; ``kind="project"`` observes a
seeded random direction (``m = 1``: the unobserved direction stays multimodal),
``kind="inpaint"`` observes the first coordinate only.
Posterior (``p(x | y)``): per component the Gaussian conditional
``Sigma = (I / s^2 + A^T A / sigma^2)^-1``, ``m_k = Sigma (mu_k / s^2 + A^T y / sigma^2)``,
weights ``w_k N(y; A mu_k, s^2 A A^T + sigma^2 I)`` renormalised.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]

__all__ = ["InverseProblem", "MixturePrior", "make_inverse_problem", "make_prior",
           "posterior", "sample_posterior"]


@dataclass(frozen=True)
class MixturePrior:
    """``sum_k w_k N(mu_k, s^2 I)`` in 2-D."""

    weights: Array  # (K,)
    means: Array  # (K, 2)
    std: float

    def sample(self, n: int, rng: np.random.Generator) -> Array:
        """``n`` prior draws, ``(n, 2)``."""
        k = rng.choice(len(self.weights), size=n, p=self.weights)
        return self.means[k] + self.std * rng.standard_normal((n, 2))


@dataclass(frozen=True)
class Posterior:
    """``p(x | y_i)`` for each observation: mixture weights ``(n, K)``, means ``(n, K, 2)``,
    one shared covariance ``(2, 2)``."""

    weights: Array
    means: Array
    cov: Array


@dataclass(frozen=True)
class InverseProblem:
    """One cell's world: the prior's training draws (all a method learns the prior from),
    the measurement operator and the test observations with their hidden truths."""

    prior: MixturePrior
    a: Array  # (m, 2)
    sigma: float
    x_train: Array  # (n_train, 2)
    x_true: Array  # (n_obs, 2)
    y: Array  # (n_obs, m)
    kind: str


def make_prior(seed: int, k: int = 6, radius: float = 2.0, std: float = 0.3) -> MixturePrior:
    """A ring of ``k`` components (angles jittered, radius +-15%) with Dirichlet(5) weights."""
    rng = np.random.default_rng(seed)
    jitter = rng.uniform(-0.25, 0.25, k)
    angles = 2 * np.pi * (np.arange(k) + jitter) / k + rng.uniform(0, 2 * np.pi)
    radii = radius * rng.uniform(0.85, 1.15, k)
    means = np.column_stack([radii * np.cos(angles), radii * np.sin(angles)])
    weights = rng.dirichlet(np.full(k, 5.0))
    return MixturePrior(weights=weights, means=means, std=std)


def posterior(prior: MixturePrior, a: Array, sigma: float, y: Array) -> Posterior:
    """The exact posterior mixture for each row of ``y`` (vectorised over observations)."""
    s2, m = prior.std**2, a.shape[0]
    cov: Array = np.linalg.inv(np.eye(2) / s2 + a.T @ a / sigma**2).astype(np.float64)
    means = (prior.means / s2)[None, :, :] + (y @ a / sigma**2)[:, None, :]
    means = means @ cov.T
    pred_cov = s2 * a @ a.T + sigma**2 * np.eye(m)
    prec = np.linalg.inv(pred_cov)
    resid = y[:, None, :] - (prior.means @ a.T)[None, :, :]
    logw = np.log(prior.weights)[None, :] - 0.5 * np.einsum("nki,ij,nkj->nk", resid, prec, resid)
    logw -= logw.max(axis=1, keepdims=True)
    w = np.exp(logw)
    return Posterior(weights=w / w.sum(axis=1, keepdims=True), means=means, cov=cov)


def sample_posterior(post: Posterior, n: int, rng: np.random.Generator) -> Array:
    """``n`` exact draws from each observation's posterior, ``(n_obs, n, 2)``."""
    n_obs, k = post.weights.shape
    cum = np.cumsum(post.weights, axis=1)
    u = rng.uniform(size=(n_obs, n, 1))
    comp = np.minimum((u > cum[:, None, :]).sum(axis=2), k - 1)
    centres = np.take_along_axis(post.means, comp[:, :, None].repeat(2, axis=2), axis=1)
    chol = np.linalg.cholesky(post.cov)
    return centres + rng.standard_normal((n_obs, n, 2)) @ chol.T


def make_inverse_problem(seed: int, *, n_train: int = 4000, n_obs: int = 32,
                         sigma: float = 0.1, kind: str = "project",
                         components: int = 6) -> InverseProblem:
    """A cell's prior, training draws, operator and ``n_obs`` observations (all from ``seed``)."""
    if kind not in ("project", "inpaint"):
        raise ValueError(f"kind must be project or inpaint, got {kind!r}")
    prior = make_prior(seed, k=components)
    rng = np.random.default_rng([seed, 1])
    if kind == "inpaint":
        a = np.array([[1.0, 0.0]])
    else:
        theta = rng.uniform(0, np.pi)
        a = np.array([[np.cos(theta), np.sin(theta)]])
    x_train = prior.sample(n_train, rng)
    x_true = prior.sample(n_obs, rng)
    y = x_true @ a.T + sigma * rng.standard_normal((n_obs, a.shape[0]))
    return InverseProblem(prior=prior, a=a, sigma=float(sigma), x_train=x_train,
                          x_true=x_true, y=y, kind=kind)
