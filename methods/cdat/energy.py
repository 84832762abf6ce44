"""CDAT (our small reading) against plain attention layers, unsupervised node anomaly scores.

Controlled Dynamics Attractor Transformer (CDAT, Zhang et al., arXiv:2606.15207): node
tokens descend an energy that couples a mixture von Mises-Fisher attention energy (tokens
on the unit sphere, couplings only along the graph's edges) with a Hopfield refinement
energy, modulated by CANN-style excitation-inhibition, with a dissipation guarantee (the
energy never rises).
Ours, parameter-free and in numpy (no training)::

    E(H) = sum_i -1/b log sum_{j in N(i)} exp(b h_i.h_j)          (vMF attention, edges only)
         + lam * sum_i -1/b_m log sum_mu exp(b_m h_i.xi_mu)        (Hopfield, memories xi)
         + kappa / (2 n) * || sum_i h_i ||^2                        (global inhibition)

with ``|h_i| = 1``; the memories are k-means centroids of the initial tokens. The dynamics
are projected gradient steps on the sphere with a backtracking (Armijo) step, so every
accepted step lowers E: that trace (``energy_descent``) is monotone by construction and
proves nothing. What the task checks instead is ``energy``: the same dynamics from the same
start at the fixed step ``step`` (the step the line search starts from), with no line
search, i.e. whether the controlled dynamics themselves dissipate at that step; it can rise
(it does at step >= 1, and on some graphs at 0.5). ``backtracks`` counts the trial steps the
line search rejected. A node's anomaly score is its own attention energy per neighbour (degree-
normalised, :func:`local_energy`) at the start plus at the attractor (a node whose
neighbours disagree with it keeps a high energy), plus how far the dynamics moved it.

The baseline, ``transformer``, applies ``layers`` plain attention layers with the same
edge mask and temperature: ``H <- normalise(H + softmax(b H H^T) H)``, no energy, no memory,
no inhibition; its score is the distance a token moved. The energy E is evaluated along its
layers too (the same function), where nothing keeps it from rising.

Inputs: ``n``, ``edges``, ``x``. Config: ``beta``, ``steps``/``layers``, ``lam``, ``kappa``,
``memories``. Config ``step`` is the fixed step of the measured trace (and the line search's first
trial). Outputs: ``score`` per node, ``energy`` (the fixed-step trace, one value per
step; the baseline's layers), and for CDAT ``energy_descent`` and ``backtracks``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from harness.plugins.plain_method import plain_method

FAMILY = "graph_anomaly"
Array = NDArray[np.float64]


def _unit(h: Array) -> Array:
    return h / np.maximum(np.linalg.norm(h, axis=1, keepdims=True), 1e-12)


def _tokens(x: Any) -> Array:
    x = np.asarray(x, dtype=float)
    sd = x.std(axis=0)
    return _unit((x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0))


def neighbours(n: int, edges: Any) -> sp.csr_matrix:
    """The symmetric 0/1 edge mask; an isolated node attends to itself."""
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    a = sp.coo_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(n, n))
    a = sp.csr_matrix(((a + a.T) > 0).astype(float))
    lonely = np.flatnonzero(np.asarray(a.sum(axis=1)).ravel() == 0)
    return sp.csr_matrix(a + sp.coo_matrix((np.ones(len(lonely)), (lonely, lonely)),
                                           shape=(n, n)))


def _edge_softmax(mask: sp.csr_matrix, h: Array, beta: float) -> tuple[sp.csr_matrix, Array]:
    """Row-softmax of ``beta h_i.h_j`` over the edges, and each row's log-sum-exp / beta."""
    rows = np.repeat(np.arange(mask.shape[0]), np.diff(mask.indptr))
    logits = beta * np.einsum("ij,ij->i", h[rows], h[mask.indices])
    top = np.full(mask.shape[0], -np.inf)
    np.maximum.at(top, rows, logits)
    w = np.exp(logits - top[rows])
    total = np.bincount(rows, weights=w, minlength=mask.shape[0])
    p = sp.csr_matrix((w / total[rows], mask.indices, mask.indptr), shape=mask.shape)
    return p, (top + np.log(total)) / beta


def local_energy(mask: sp.csr_matrix, h: Array, beta: float) -> Array:
    """Each node's vMF attention energy per neighbour, ``-1/b log mean_{j in N(i)}
    exp(b h_i.h_j)`` (the sum's energy plus ``log deg / b``, so a clique's many links do
    not hide it)."""
    return -_edge_softmax(mask, h, beta)[1] + np.log(np.diff(mask.indptr)) / beta


def energy_and_grad(h: Array, mask: sp.csr_matrix, memories: Array, beta: float,
                    beta_m: float, lam: float, kappa: float) -> tuple[float, Array]:
    """E(H) and its Euclidean gradient."""
    p, lse = _edge_softmax(mask, h, beta)
    grad = -(p @ h + p.T @ h)
    logits = beta_m * h @ memories.T
    top = logits.max(axis=1, keepdims=True)
    q = np.exp(logits - top)
    z = q.sum(axis=1, keepdims=True)
    hop = (top[:, 0] + np.log(z[:, 0])) / beta_m
    grad -= lam * (q / z) @ memories
    total = h.sum(axis=0)
    grad += kappa / len(h) * total[None, :]
    e = float(-lse.sum() - lam * hop.sum() + kappa / (2 * len(h)) * float(total @ total))
    return e, grad


def _memories(h: Array, count: int, seed: int, iters: int = 10) -> Array:
    rng = np.random.default_rng(seed)
    centres = h[rng.choice(len(h), size=min(count, len(h)), replace=False)].copy()
    for _ in range(iters):
        labels = (h @ centres.T).argmax(axis=1)
        for c in range(len(centres)):
            if (labels == c).any():
                centres[c] = h[labels == c].mean(axis=0)
        centres = _unit(centres)
    return centres


def _config(config: Mapping[str, Any]) -> tuple[float, float, float, float, int]:
    return (float(config.get("beta", 4.0)), float(config.get("beta_m", 4.0)),
            float(config.get("lam", 0.5)), float(config.get("kappa", 1.0)),
            int(config.get("memories", 5)))


@plain_method("cdat", family=FAMILY)
def cdat(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """CDAT (small reading): dissipative descent of a vMF attention + Hopfield + inhibition
    energy on the sphere; score = a node's attention energy at the attractor + its move."""
    n = int(inputs["n"])
    mask = neighbours(n, inputs["edges"])
    h0 = _tokens(inputs["x"])
    beta, beta_m, lam, kappa, n_mem = _config(config)
    memories = _memories(h0, n_mem, seed)
    step0 = float(config.get("step", 0.5))
    steps = int(config.get("steps", 20))
    h, step, backtracks = h0.copy(), step0, 0
    e, grad = energy_and_grad(h, mask, memories, beta, beta_m, lam, kappa)
    trace = [e]
    for _ in range(steps):
        tangent = grad - np.einsum("ij,ij->i", grad, h)[:, None] * h
        slope = float((tangent * tangent).sum())
        while step > 1e-8:  # Armijo backtracking: accept only a sufficient decrease
            candidate = _unit(h - step * tangent)
            e_new, g_new = energy_and_grad(candidate, mask, memories, beta, beta_m, lam, kappa)
            if e_new <= e - 1e-4 * step * slope:
                break
            step *= 0.5
            backtracks += 1
        else:
            break
        h, e, grad = candidate, e_new, g_new
        trace.append(e)
        step *= 1.5
    moved = np.linalg.norm(h - h0, axis=1)
    score = local_energy(mask, h, beta) + local_energy(mask, h0, beta) + moved
    free = fixed_step_trace(h0, mask, memories, (beta, beta_m, lam, kappa), step0, steps)
    return {"score": score.tolist(), "energy": free, "energy_descent": trace,
            "backtracks": backtracks}


def fixed_step_trace(h0: Array, mask: sp.csr_matrix, memories: Array,
                     params: tuple[float, float, float, float], step: float,
                     steps: int) -> list[float]:
    """E along the projected gradient dynamics at a fixed ``step``, with no line search:
    the dynamics' own dissipation (nothing forces this trace down)."""
    h = h0.copy()
    e, grad = energy_and_grad(h, mask, memories, *params)
    trace = [e]
    for _ in range(steps):
        tangent = grad - np.einsum("ij,ij->i", grad, h)[:, None] * h
        h = _unit(h - step * tangent)
        e, grad = energy_and_grad(h, mask, memories, *params)
        trace.append(e)
    return trace


@plain_method("transformer", family=FAMILY, role="baseline")
def transformer(inputs: Mapping[str, Any], config: Mapping[str, Any],
                seed: int) -> dict[str, Any]:
    """Plain edge-masked attention layers (residual, re-normalised); score = how far a
    token moved. The same energy is traced along the layers."""
    n = int(inputs["n"])
    mask = neighbours(n, inputs["edges"])
    h0 = _tokens(inputs["x"])
    beta, beta_m, lam, kappa, n_mem = _config(config)
    memories = _memories(h0, n_mem, seed)
    h = h0.copy()
    trace = [energy_and_grad(h, mask, memories, beta, beta_m, lam, kappa)[0]]
    for _ in range(int(config.get("layers", config.get("steps", 20)))):
        p, _lse = _edge_softmax(mask, h, beta)
        h = _unit(h + p @ h)
        trace.append(energy_and_grad(h, mask, memories, beta, beta_m, lam, kappa)[0])
    return {"score": np.linalg.norm(h - h0, axis=1).tolist(), "energy": trace}
