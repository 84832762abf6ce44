"""A seeded observational study with binary potential outcomes, monotone treatment.

Covariates ``x ~ U[-1, 1]^d``. The control outcome ``Y(0) ~ Bern(mu0(x))`` has a wiggly,
hard-to-model ``mu0`` (sines); the responder probability ``tau(x) = P(Y(1)=1, Y(0)=0 | x)``
is a smooth logistic function of a quadratic, and ``Y(1) >= Y(0)`` (monotonicity) by
coupling both to one uniform. Treatment is confounded by ``x`` through a logistic
propensity (unconfoundedness holds). A rule classifies each person as responder (1),
non-responder (0) or abstains (2) at cost ``c``; its causal risk is
``E[1{r=1}(1 - tau) + 1{r=0} tau + c 1{r=2}]``, known exactly on the test points because
``tau`` is.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]


def _sigmoid(z: Array) -> Array:
    return 1.0 / (1.0 + np.exp(-z))


def mu0(x: Array) -> Array:
    """Control outcome probability: sines of two covariates (not quadratic)."""
    return 0.05 + 0.4 * _sigmoid(2.5 * np.sin(3.0 * x[:, 1]) + 2.0 * np.cos(4.0 * x[:, 3]))


def responder_share(x: Array) -> Array:
    """``g(x)``: the share of would-be non-responders under control whom treatment turns."""
    return _sigmoid(3.0 * x[:, 0] + 2.0 * x[:, 1] ** 2 - 2.5 * x[:, 2] * x[:, 0] - 0.5)


def tau(x: Array) -> Array:
    """``P(responder | x) = mu1 - mu0 = (1 - mu0) g``."""
    return (1.0 - mu0(x)) * responder_share(x)


def propensity(x: Array) -> Array:
    return _sigmoid(0.9 * x[:, 0] - 0.7 * x[:, 3] + 0.3 * x[:, 1])


@dataclass(frozen=True)
class Trial:
    """Training data (x, a, y) and test covariates with their true responder probability."""

    x: Array
    a: NDArray[np.int64]
    y: NDArray[np.int64]
    x_test: Array
    tau_test: Array
    y0: NDArray[np.int64]
    y1: NDArray[np.int64]


def make_trial(n: int = 2000, n_test: int = 5000, d: int = 4, seed: int = 0) -> Trial:
    """One seeded study: ``n`` observed people and ``n_test`` people to classify."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, d))
    u = rng.random(n)
    m0 = mu0(x)
    m1 = m0 + tau(x)
    y0 = (u < m0).astype(np.int64)
    y1 = (u < m1).astype(np.int64)
    a = (rng.random(n) < propensity(x)).astype(np.int64)
    y = np.where(a == 1, y1, y0)
    x_test = rng.uniform(-1, 1, (n_test, d))
    return Trial(x=x, a=a, y=y, x_test=x_test, tau_test=tau(x_test), y0=y0, y1=y1)


def bayes_rule(tau_values: Array, c: float) -> NDArray[np.int64]:
    """The optimal rule (Chow's): responder above ``1 - c``, non-responder below ``c``."""
    out = np.full(len(tau_values), 2, dtype=np.int64)
    out[tau_values > 1 - c] = 1
    out[tau_values < c] = 0
    return out


def abstention_risk(decisions: NDArray[np.int64], tau_values: Array, c: float) -> float:
    """The causal misclassification risk with abstention of ``decisions`` (exact in tau)."""
    loss = np.where(decisions == 1, 1.0 - tau_values,
                    np.where(decisions == 0, tau_values, c))
    return float(loss.mean())
