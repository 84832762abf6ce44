"""The exact multi-armed-bandit check of PMD-mean's population solution (float64 numpy).

Xu, Lu, Yu, Zhao, "Approximation of Log-Partition Function in Policy Mirror Descent Induces
Implicit Regularization for LLM Post-Training" (arXiv 2602.05933): PMD-mean replaces the
log-partition term of policy mirror descent by the mean reward under the sampling policy
and regresses in log-policy space; its population solution optimises a mirror-descent
subproblem with an adaptive mixed KL-chi^2 regulariser, more conservative when the
expected reward is low. The derivation below is ours (from that statement), and
``tests/methods/rl_pmd/test_bandit.py`` checks every step of it numerically.

Setting. ``N`` arms, sampling policy ``p = pi_t`` (all ``p_a > 0``), known mean rewards
``r_a``, ``rbar = sum_a p_a r_a``, temperature ``tau > 0``. ``K >= 2`` arms are drawn i.i.d.
from ``p``; sample ``i`` gets the leave-one-out advantage ``A_i = r(a_i) - mean_{j != i}
r(a_j)`` (here the arm's mean reward; a noisy reward with that mean changes only the
constant below). The PMD-mean loss of a policy ``pi`` is

    L(pi) = E[ 1/K sum_i tau/2 (A_i / tau - log(pi(a_i) / p(a_i)))^2 ].

1. *Population regression target.* The other ``K - 1`` draws are independent of ``a_i``, so
   ``E[A_i | a_i = a] = r_a - rbar =: d_a`` for every ``K >= 2``. Each term is a square in
   ``u_a := log(pi_a / p_a)``, so ``L(pi) = sum_a p_a tau/2 (u_a - d_a/tau)^2 + C`` with
   ``C`` (the advantage's conditional variance) free of ``pi``: the population problem is
   the same for every ``K``. :func:`expected_loo_loss` computes ``L`` by exact enumeration
   of all ``N^K`` draws, independently of this step.

2. *Stationarity.* Minimise over the simplex with a multiplier ``lam`` for
   ``sum_a pi_a = 1``. With ``w_a = pi_a / p_a``, ``dL/dpi_a = p_a tau (u_a - d_a/tau) / pi_a
   = tau (log w_a - d_a/tau) / w_a``, so ``tau log w_a - d_a = -lam w_a``, i.e.

       tau log w_a + lam w_a = d_a.                                              (*)

   Multiplying (*) by ``p_a`` and summing (``sum p_a d_a = 0``, ``sum p_a w_a = 1``) gives
   ``lam = -tau sum_a p_a log w_a = tau KL(p || pi*) >= 0``.

3. *Lambert-W form.* (*) is ``(lam/tau) w e^{(lam/tau) w} = (lam/tau) e^{d/tau}``, so
   ``w_a = (tau/lam) W0((lam/tau) e^{d_a/tau})`` (principal branch; the argument is
   positive), with ``lam`` the unique root of ``sum_a p_a w_a(lam) = 1``: ``w_a`` falls
   strictly in ``lam``, from ``e^{d_a/tau}`` (whose ``p``-mean is >= 1 by Jensen) to 0.
   :func:`pmd_mean_solution` solves it.

4. *Mixed KL-chi^2 mirror descent.* The subproblem

       max_pi  sum_a pi_a r_a - tau KL(pi || p) - c/2 chi^2(pi || p),
       chi^2(pi || p) = sum_a (pi_a - p_a)^2 / p_a,

   is strictly concave for ``c >= 0``; its stationarity with multiplier ``mu`` is
   ``r_a - tau (log w_a + 1) - c (w_a - 1) = mu``, i.e. ``tau log w_a + c w_a = r_a - k`` for
   one constant ``k``. The left side rises strictly in ``w_a``, so ``sum p_a w_a = 1`` fixes
   ``k`` uniquely. At ``c = lam`` the PMD-mean solution satisfies it with ``k = rbar``, so

       PMD-mean's population solution = argmax of the mixed subproblem at c = tau KL(p || pi*).

   The chi^2 weight is adaptive: it depends on ``p`` and ``r`` through the solution.
   :func:`mixed_solution` solves the subproblem for any given ``c`` by its own route.

5. *Against plain PMD.* ``c = 0`` is the KL-regularised subproblem with the closed form
   ``pi ∝ p e^{r/tau}`` (:func:`pmd_kl_solution`), which needs the partition function.
   With ``c > 0`` the chi^2 term penalises large ratios ``w_a``: when the expected reward is
   low, the few good arms would get ``w = e^{(1 - rbar)/tau} / Z`` under PMD, while (*)
   bounds them at about ``w <= d_a / lam``, so PMD-mean moves less (the test measures
   ``KL(pi* || p)`` and the reward gain of both updates across ``rbar``).

Numerics are float64; :func:`newton_on_logits` minimises any smooth objective of a
softmax policy by Newton's method with exact derivatives (finite differences are not used).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import brentq
from scipy.special import lambertw

__all__ = ["expected_loo_loss", "loo_loss_coefficients", "mixed_objective", "mixed_solution",
           "newton_on_logits", "newton_on_simplex", "pmd_kl_solution", "pmd_mean_solution",
           "regression_solution", "softmax"]

Vec = NDArray[np.float64]


def _check(p: Vec, r: Vec, tau: float) -> tuple[Vec, Vec]:
    p, r = np.asarray(p, dtype=np.float64), np.asarray(r, dtype=np.float64)
    if p.ndim != 1 or p.shape != r.shape or p.size < 2:
        raise ValueError("p and r must be 1-D arrays of the same length >= 2")
    if np.any(p <= 0) or abs(p.sum() - 1) > 1e-12:
        raise ValueError("p must be a distribution with every arm > 0")
    if not tau > 0:
        raise ValueError("tau must be > 0")
    return p, r


def softmax(z: Vec) -> Vec:
    """A numerically safe softmax."""
    e = np.exp(z - z.max())
    return np.asarray(e / e.sum())


def pmd_kl_solution(p: Vec, r: Vec, tau: float) -> Vec:
    """Plain (KL-only) PMD: ``pi ∝ p exp(r / tau)``."""
    p, r = _check(p, r, tau)
    return softmax(np.log(p) + r / tau)


def _w_of(lam: float, d: Vec, tau: float) -> Vec:
    if lam == 0.0:
        return np.exp(d / tau)
    # W0(z) for z = (lam/tau) e^{d/tau}, computed from log z to avoid overflow
    log_z = np.log(lam / tau) + d / tau
    big = log_z > 500
    w0 = np.empty_like(d)
    w0[~big] = np.real(lambertw(np.exp(log_z[~big])))
    if big.any():  # W(z) ~ log z - log log z, refined by Newton on w + log w = log z
        x = log_z[big] - np.log(log_z[big])
        for _ in range(50):
            x = x - (x + np.log(x) - log_z[big]) / (1 + 1 / x)
        w0[big] = x
    return np.asarray((tau / lam) * w0)


def pmd_mean_solution(p: Vec, r: Vec, tau: float) -> tuple[Vec, float]:
    """PMD-mean's population solution by the Lambert-W form (step 3) and its ``lam``."""
    p, r = _check(p, r, tau)
    d = r - p @ r
    if np.allclose(d, 0.0, atol=1e-15):
        return p.copy(), 0.0

    def gap(lam: float) -> float:
        return float(p @ _w_of(lam, d, tau) - 1.0)

    hi = 1.0
    while gap(hi) > 0:
        hi *= 4.0
    lam = float(brentq(gap, 1e-300, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps,
                       maxiter=500))
    pi = p * _w_of(lam, d, tau)
    return pi / pi.sum(), lam


def loo_loss_coefficients(p: Vec, r: Vec, tau: float, k: int) -> tuple[Vec, Vec, float]:
    """``(a, b, c)`` with ``L(pi) = sum_a a_a u_a^2 + b_a u_a + c``, ``u = log(pi/p)``, from
    the exact expectation over all ``N^K`` draws of ``K`` arms (no use of step 1)."""
    p, r = _check(p, r, tau)
    if k < 2:
        raise ValueError("the leave-one-out advantage needs K >= 2")
    n = p.size
    quad, lin, const = np.zeros(n), np.zeros(n), 0.0
    for draw in itertools.product(range(n), repeat=k):
        prob = float(np.prod(p[list(draw)]))
        rewards = r[list(draw)]
        total = rewards.sum()
        for i, arm in enumerate(draw):
            adv = rewards[i] - (total - rewards[i]) / (k - 1)
            # tau/2 (adv/tau - u)^2 = tau/2 u^2 - adv u + adv^2 / (2 tau), averaged over i
            quad[arm] += prob * tau / 2 / k
            lin[arm] += prob * -adv / k
            const += prob * adv**2 / (2 * tau) / k
    return quad, lin, const


def expected_loo_loss(pi: Vec, p: Vec, r: Vec, tau: float, k: int) -> float:
    """The exact K-sample PMD-mean loss ``L(pi)`` (module docstring)."""
    quad, lin, const = loo_loss_coefficients(p, r, tau, k)
    u = np.log(np.asarray(pi, dtype=np.float64) / p)
    return float(quad @ u**2 + lin @ u + const)


Objective = Callable[[Vec], tuple[float, Vec, NDArray[np.float64]]]
"""``f(pi) -> (value, gradient, Hessian)`` with respect to the probabilities ``pi``."""


def newton_on_logits(f: Objective, z0: Vec, tol: float = 1e-11,
                     max_iter: int = 200) -> Vec:
    """Minimise ``f(softmax(z))`` over logits ``z`` by damped Newton's method.

    Exact derivatives by the chain rule through the softmax Jacobian ``J = diag(pi) -
    pi pi^T``: ``g_z = J g`` and ``H_z = J H J + diag(pi v) - (pi v) pi^T - pi (pi v)^T``
    with ``v = g - (pi . g)``. The all-ones logit direction is a null direction, handled by
    dropping it from the eigen-decomposition of ``H_z``; negative curvature far from the
    optimum (where the softmax saturates) is flipped to its absolute value, so every step
    descends and a backtracking line search keeps it safe. Near the optimum the Hessian is
    positive definite and the steps are Newton's (quadratic convergence). Returns the
    probabilities once the simplex KKT condition holds, ``max_a |g_a - pi . g| < tol``
    (relative to ``|g|``): not on ``|g_z|`` alone, which also vanishes where the softmax
    saturates at a vertex.
    """
    z = np.asarray(z0, dtype=np.float64).copy()
    for _ in range(max_iter):
        pi = softmax(z)
        val, g, h = f(pi)
        jac = np.diag(pi) - np.outer(pi, pi)
        gz = jac @ g
        s = pi @ g
        if np.max(np.abs(g - s)) < tol * max(1.0, float(np.max(np.abs(g)))):
            return pi  # the simplex KKT condition: the gradient is constant across arms
        # second derivative of softmax: d^2 pi_a / dz_b dz_c contracted with g
        curv = np.diag(pi * (g - s)) - np.outer(pi * (g - s), pi) - np.outer(pi, pi * (g - s))
        hz = jac @ h @ jac + curv
        step = _descent_step(hz, gz)
        t = 1.0
        if -(gz @ step) < 1e-12 * (abs(val) + 1):
            # the predicted decrease is below what float64 values resolve: a line search
            # cannot see it, and this close to the optimum the full Newton step is right
            z = z + step
            z -= z.max()
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            while t > 1e-12 and not (  # a NaN (a probability underflowed to 0) is refused
                    f(softmax(z + t * step))[0] <= val + 1e-4 * t * (gz @ step)):
                t /= 2
        if t <= 1e-12:
            break
        z = z + t * step
        z -= z.max()
    raise RuntimeError("Newton did not converge")


def _descent_step(hz: NDArray[np.float64], gz: Vec) -> Vec:
    vals, vecs = np.linalg.eigh(hz)
    ones = np.ones(gz.size) / np.sqrt(gz.size)
    keep = np.abs(vecs.T @ ones) < 0.5  # the null direction is all-ones
    scale = max(float(np.max(np.abs(vals))), 1e-300)
    vals = np.maximum(np.abs(vals[keep]), 1e-14 * scale)
    basis = vecs[:, keep]
    return np.asarray(-basis @ ((basis.T @ gz) / vals))


def regression_solution(p: Vec, r: Vec, tau: float, k: int) -> Vec:
    """Minimiser of the exact K-sample PMD-mean loss over softmax policies (Newton)."""
    p, r = _check(p, r, tau)
    quad, lin, _ = loo_loss_coefficients(p, r, tau, k)

    def f(pi: Vec) -> tuple[float, Vec, NDArray[np.float64]]:
        u = np.log(pi / p)
        value = float(quad @ u**2 + lin @ u)
        grad = (2 * quad * u + lin) / pi
        hess = np.diag((2 * quad - (2 * quad * u + lin)) / pi**2)
        return value, grad, hess

    return newton_on_logits(f, np.log(p))


def newton_on_simplex(f: Objective, pi0: Vec, tol: float = 1e-12,
                      max_iter: int = 200) -> Vec:
    """Minimise a strictly convex ``f(pi)`` over the open simplex by equality-constrained
    Newton: solve ``[H 1; 1^T 0] [d; nu] = [-g; 0]``, backtrack to stay inside and descend.
    A route independent of the logit parametrisation (used for the mixed subproblem)."""
    pi = np.asarray(pi0, dtype=np.float64).copy()
    n = pi.size
    for _ in range(max_iter):
        val, g, h = f(pi)
        if np.max(np.abs(g - pi @ g)) < tol * max(1.0, float(np.max(np.abs(g)))):
            return pi
        kkt = np.zeros((n + 1, n + 1))
        kkt[:n, :n], kkt[:n, n], kkt[n, :n] = h, 1.0, 1.0
        d = np.linalg.solve(kkt, np.concatenate([-g, [0.0]]))[:n]
        t = 1.0
        while np.any(pi + t * d <= 0):
            t /= 2
        if -(g @ d) < 1e-13 * (abs(val) + 1):
            pi = pi + t * d
            continue
        while t > 1e-14 and not f(pi + t * d)[0] <= val + 1e-4 * t * (g @ d):
            t /= 2
        pi = pi + t * d
        pi /= pi.sum()
    raise RuntimeError("Newton did not converge")


def mixed_objective(pi: Vec, p: Vec, r: Vec, tau: float, c: float) -> float:
    """``sum pi r - tau KL(pi||p) - c/2 chi^2(pi||p)`` (to be maximised)."""
    pi = np.asarray(pi, dtype=np.float64)
    return float(pi @ r - tau * pi @ np.log(pi / p) - c / 2 * np.sum((pi - p) ** 2 / p))


def mixed_solution(p: Vec, r: Vec, tau: float, c: float) -> Vec:
    """Maximiser of the mixed KL-chi^2 subproblem for a given ``c`` (constrained Newton on
    the simplex: the problem is strictly concave in ``pi``)."""
    p, r = _check(p, r, tau)
    if c < 0:
        raise ValueError("c must be >= 0")

    def f(pi: Vec) -> tuple[float, Vec, NDArray[np.float64]]:
        value = -mixed_objective(pi, p, r, tau, c)
        grad = -(r - tau * (np.log(pi / p) + 1) - c * (pi - p) / p)
        hess = np.diag(tau / pi + c / p)
        return value, grad, hess

    return newton_on_simplex(f, p)
