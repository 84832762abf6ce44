"""TRECA-style doubly robust responder classification with abstention, and the plug-in rule.

"Treatment Responder Classification with Abstention" (TRECA, ICML 2026;
https://openreview.net/forum?id=O6iPDyUP97). With
abstention cost ``c < 1/2`` the causal misclassification risk of a rule is
``E[1{r=1}(1 - tau) + 1{r=0} tau + c 1{abstain}]``, minimised by Chow's thresholds on the
responder probability ``tau`` (under monotonicity ``tau = mu1 - mu0``). Written with
``min(tau, 1 - tau, c)`` this risk is a CVaR-type functional of ``tau``, which is why a
rule can be learned from a doubly robust signal.

* ``plugin``: fit ``mu1`` and ``mu0`` by logistic regression (quadratic features) and
  threshold ``mu1_hat - mu0_hat`` at ``c`` and ``1 - c``.
* ``treca``: cross-fitted nuisances (the same outcome models plus a logistic propensity),
  the doubly robust pseudo-outcome ``psi = mu1 - mu0 + a (y - mu1)/e - (1 - a)(y - mu0)/(1 - e)``
  whose conditional mean is ``tau`` when either nuisance is right, and the empirical DR risk
  of the rule class minimised: for a risk linear in ``psi`` that is a least-squares fit of
  ``psi`` on the rule's features, then Chow's thresholds. This is our reading of the
  method at this scale, not the paper's code (it also handles monotonicity and
  unconfoundedness violations, not tested here).

Inputs: ``x``, ``a``, ``y`` (training), ``x_test``. Config: ``c``. Outputs: ``decisions``
on ``x_test`` (0, 1, 2 = abstain) and ``tau_hat``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from harness.plugins.plain_method import plain_method

FAMILY = "responder_abstention"
Array = NDArray[np.float64]


def quadratic_features(x: Array) -> Array:
    """``1, x_i, x_i x_j (i <= j)``."""
    n, d = x.shape
    cols = [np.ones(n), *x.T]
    for i in range(d):
        for j in range(i, d):
            cols.append(x[:, i] * x[:, j])
    return np.column_stack(cols)


def fit_logistic(phi: Array, y: Array, ridge: float = 1e-3, iters: int = 50) -> Array:
    """Ridge-penalised logistic regression by Newton's method; the coefficients."""
    beta = np.zeros(phi.shape[1])
    penalty = ridge * len(y) * np.eye(phi.shape[1])
    penalty[0, 0] = 0.0
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-phi @ beta))
        grad = phi.T @ (p - y) + penalty @ beta
        hess = (phi * (p * (1 - p))[:, None]).T @ phi + penalty
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    return beta


def _predict(phi: Array, beta: Array) -> Array:
    return 1.0 / (1.0 + np.exp(-phi @ beta))


def chow(tau_hat: Array, c: float) -> NDArray[np.int64]:
    out = np.full(len(tau_hat), 2, dtype=np.int64)
    out[tau_hat > 1 - c] = 1
    out[tau_hat < c] = 0
    return out


def _outcome_models(phi: Array, a: Array, y: Array) -> tuple[Array, Array]:
    return fit_logistic(phi[a == 1], y[a == 1]), fit_logistic(phi[a == 0], y[a == 0])


@plain_method("treca-plugin", family=FAMILY, role="baseline")
def plugin(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """Plug-in rule: Chow's thresholds on mu1_hat - mu0_hat (logistic, quadratic features)."""
    x, a, y = (np.asarray(inputs[k], dtype=float) for k in ("x", "a", "y"))
    phi, phi_test = quadratic_features(x), quadratic_features(np.asarray(inputs["x_test"]))
    b1, b0 = _outcome_models(phi, a, y)
    tau_hat = np.clip(_predict(phi_test, b1) - _predict(phi_test, b0), 0.0, 1.0)
    return {"decisions": chow(tau_hat, float(config["c"])), "tau_hat": tau_hat}


@plain_method("treca", family=FAMILY)
def treca(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """Doubly robust rule: cross-fitted DR pseudo-outcomes, least-squares rule score, Chow."""
    x, a, y = (np.asarray(inputs[k], dtype=float) for k in ("x", "a", "y"))
    folds = int(config.get("folds", 2))
    clip = float(config.get("propensity_clip", 0.02))
    phi = quadratic_features(x)
    rng = np.random.default_rng(seed)
    fold = rng.permutation(len(y)) % folds
    psi = np.empty(len(y))
    for f in range(folds):
        train, held = fold != f, fold == f
        b1, b0 = _outcome_models(phi[train], a[train], y[train])
        be = fit_logistic(phi[train], a[train])
        m1, m0 = _predict(phi[held], b1), _predict(phi[held], b0)
        e = np.clip(_predict(phi[held], be), clip, 1 - clip)
        ah, yh = a[held], y[held]
        psi[held] = m1 - m0 + ah * (yh - m1) / e - (1 - ah) * (yh - m0) / (1 - e)
    ridge = float(config.get("ridge", 1e-3)) * len(y)
    gram = phi.T @ phi + ridge * np.eye(phi.shape[1])
    theta = np.linalg.solve(gram, phi.T @ psi)
    tau_hat = np.clip(quadratic_features(np.asarray(inputs["x_test"])) @ theta, 0.0, 1.0)
    return {"decisions": chow(tau_hat, float(config["c"])), "tau_hat": tau_hat}
