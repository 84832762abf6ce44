"""HMH (our small reading) against Chebyshev and GCN filters, on one graph with a split.

Hierarchical Multi-view HAAR (HMH, ICML 2026, github.com/sazzad1008/Scalable-HMH101):
learn signed, feature- and structure-aware affinities with a heterophily-aware encoder,
build a graph hierarchy from the embeddings, apply learnable spectral filters in a sparse
orthonormal Haar basis at each level, and combine the levels by skip connections. Ours,
all linear and in numpy (no deep encoder, no GPU):

* **encoder**: a multinomial logistic regression on ``[x, D^-1 A x, (D^-1 A)^2 x]``
  (degree-normalised, so hubs do not dominate; its signed weights are the heterophily-aware
  part), cross-fitted on the training nodes; its logits are the node embeddings;
* **hierarchy**: k-means on the embeddings into ``n / ratio`` clusters, then on the cluster
  centroids into ``n / ratio^2``, ... down to ``2k`` (a hard hierarchy, O(n) per level);
* **Haar filters**: the Haar basis of a hierarchy splits a signal into orthogonal detail
  bands ``P_{l-1} f - P_l f`` (``P_l``: the mean over the level-l cluster) and the coarsest
  average; a spectral filter constant on each band is a learnable weight per band and
  feature, so the readout is a logistic regression on all bands of ``[x, Ax, embedding]``
  (the skip connections) and learns the filters.

Baselines, with the same readout and the same validation choice of the ridge:
``chebnet`` (Chebyshev polynomials ``T_0..T_K`` of the rescaled normalised Laplacian,
a learnable coefficient per order and feature) and ``gcn`` (SGC: ``S^2 x`` with
``S = D~^-1/2 (A + I) D~^-1/2``, the low-pass filter a two-layer linear GCN applies).

Inputs: ``n``, ``edges`` (pairs), ``x``, ``train`` / ``val`` / ``test`` node indices,
``y_train``, ``y_val``, ``k``. Config: ``ratio`` (HMH), ``order`` (Chebyshev).
Outputs: ``pred`` (test labels), ``val_accuracy``, ``levels`` (HMH).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from scipy.optimize import minimize

from harness.plugins.plain_method import plain_method

FAMILY = "node_classification"
RIDGES = (1e-3, 1e-2, 1e-1, 1.0)
Array = NDArray[np.float64]


def adjacency(n: int, edges: Any) -> sp.csr_matrix:
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    a = sp.coo_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(n, n))
    return sp.csr_matrix(((a + a.T) > 0).astype(float))


def _row_normalised(a: sp.csr_matrix) -> sp.csr_matrix:
    deg = np.asarray(a.sum(axis=1)).ravel()
    return sp.csr_matrix(sp.diags(1.0 / np.maximum(deg, 1.0)) @ a)


def _standardise(f: Array) -> Array:
    sd = f.std(axis=0)
    return (f - f.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def fit_logistic(f: Array, y: NDArray[np.int64], k: int, ridge: float) -> Array:
    """Multinomial logistic regression (L-BFGS) with an L2 ridge; returns (d + 1) x k."""
    n, d = f.shape
    design = np.column_stack([f, np.ones(n)])
    onehot = np.eye(k)[y]

    def loss(w_flat: Array) -> tuple[float, Array]:
        w = w_flat.reshape(d + 1, k)
        z = design @ w
        z -= z.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        pen = 0.5 * ridge * float((w[:-1] ** 2).sum())
        grad = design.T @ (np.exp(logp) - onehot) / n
        grad[:-1] += ridge * w[:-1]
        return float(-(onehot * logp).sum() / n) + pen, grad.ravel()

    res = minimize(loss, np.zeros((d + 1) * k), jac=True, method="L-BFGS-B",
                   options={"maxiter": 300})
    return np.asarray(res.x).reshape(d + 1, k)


def _logits(f: Array, w: Array) -> Array:
    return np.column_stack([f, np.ones(len(f))]) @ w


def readout(features: Array, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The shared linear readout: the ridge chosen by validation accuracy, then test labels."""
    f = _standardise(features)
    k = int(inputs["k"])
    train, val, test = (np.asarray(inputs[s], dtype=np.int64) for s in ("train", "val", "test"))
    y_train, y_val = np.asarray(inputs["y_train"]), np.asarray(inputs["y_val"])
    best: tuple[float, Array] | None = None
    for ridge in RIDGES:
        w = fit_logistic(f[train], y_train, k, ridge)
        acc = float(np.mean(_logits(f[val], w).argmax(axis=1) == y_val))
        if best is None or acc > best[0]:
            best = (acc, w)
    assert best is not None
    return {"pred": _logits(f[test], best[1]).argmax(axis=1).tolist(), "val_accuracy": best[0]}


def kmeans(z: Array, n_clusters: int, seed: int, iters: int = 15) -> NDArray[np.int64]:
    """Lloyd's k-means from distinct random points; returns a label per row."""
    rng = np.random.default_rng(seed)
    n_clusters = max(1, min(n_clusters, len(z)))
    centres = z[rng.choice(len(z), size=n_clusters, replace=False)].copy()
    labels = np.zeros(len(z), dtype=np.int64)
    for _ in range(iters):
        dist = (z**2).sum(1)[:, None] - 2 * z @ centres.T + (centres**2).sum(1)[None, :]
        new = dist.argmin(axis=1)
        if np.array_equal(new, labels) and _ > 0:
            break
        labels = new
        counts = np.bincount(labels, minlength=n_clusters)
        sums = np.zeros_like(centres)
        np.add.at(sums, labels, z)
        filled = counts > 0
        centres[filled] = sums[filled] / counts[filled, None]
    return labels


def hierarchy(z: Array, k: int, ratio: int, seed: int) -> list[NDArray[np.int64]]:
    """Cluster assignments of every node at each level, finest first (n / ratio clusters,
    then n / ratio^2, ... while more than 2k)."""
    levels: list[NDArray[np.int64]] = []
    node_to = np.arange(len(z))
    points = z
    while len(points) // ratio >= 2 * k:
        labels = kmeans(points, len(points) // ratio, seed + len(levels))
        _, labels = np.unique(labels, return_inverse=True)
        node_to = labels[node_to]
        levels.append(node_to.copy())
        counts = np.bincount(labels)
        sums = np.zeros((counts.size, points.shape[1]))
        np.add.at(sums, labels, points)
        points = sums / counts[:, None]
    return levels


def haar_bands(f: Array, levels: list[NDArray[np.int64]]) -> list[Array]:
    """The orthogonal Haar bands of ``f`` over the hierarchy: the detail ``P_{l-1} f -
    P_l f`` at each level (``P_0 f = f``) and the coarsest cluster average."""
    bands, previous = [], f
    for assign in levels:
        counts = np.bincount(assign).astype(float)
        sums = np.zeros((counts.size, f.shape[1]))
        np.add.at(sums, assign, f)
        coarse = (sums / counts[:, None])[assign]
        bands.append(previous - coarse)
        previous = coarse
    bands.append(previous)
    return bands


def _encoder(f: Array, inputs: Mapping[str, Any], seed: int, folds: int = 5) -> Array:
    """Logits of a logistic encoder, cross-fitted on the training nodes (out of fold)."""
    f = _standardise(f)
    k = int(inputs["k"])
    train = np.asarray(inputs["train"], dtype=np.int64)
    y_train = np.asarray(inputs["y_train"])
    out = _logits(f, fit_logistic(f[train], y_train, k, 1e-2))
    fold = np.random.default_rng(seed).permutation(len(train)) % folds
    for i in range(folds):
        w = fit_logistic(f[train[fold != i]], y_train[fold != i], k, 1e-2)
        out[train[fold == i]] = _logits(f[train[fold == i]], w)
    return out


@plain_method("hmh", family=FAMILY)
def hmh(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """HMH (small linear reading): Haar band filters on a hierarchy learned from a signed
    heterophily-aware encoder, levels joined by skip connections."""
    n, x = int(inputs["n"]), np.asarray(inputs["x"], dtype=float)
    walk = _row_normalised(adjacency(n, inputs["edges"]))
    ax = walk @ x
    emb = _encoder(np.hstack([x, ax, walk @ ax]), inputs, seed)
    levels = hierarchy(emb, int(inputs["k"]), int(config.get("ratio", 8)), seed)
    base = np.hstack([x, ax, emb])
    out = readout(np.hstack(haar_bands(base, levels)), inputs)
    return {**out, "levels": len(levels)}


def chebyshev_features(a: sp.csr_matrix, x: Array, order: int) -> Array:
    """``[T_0(L~) x, ..., T_K(L~) x]`` with ``L~ = L_sym - I = -D^-1/2 A D^-1/2``."""
    deg = np.asarray(a.sum(axis=1)).ravel()
    inv = sp.diags(1.0 / np.sqrt(np.maximum(deg, 1.0)))
    lt = -(inv @ a @ inv)
    terms = [x, lt @ x]
    while len(terms) <= order:
        terms.append(2 * (lt @ terms[-1]) - terms[-2])
    return np.hstack(terms[:order + 1])


@plain_method("chebnet", family=FAMILY, role="baseline")
def chebnet(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """Chebyshev polynomial spectral filters of order K (learnable per order and feature)."""
    n, x = int(inputs["n"]), np.asarray(inputs["x"], dtype=float)
    a = adjacency(n, inputs["edges"])
    return readout(chebyshev_features(a, x, int(config.get("order", 3))), inputs)


@plain_method("gcn", family=FAMILY, role="reference")
def gcn(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """A linear two-layer GCN (SGC): the low-pass ``S^2 x`` with self-loops."""
    n, x = int(inputs["n"]), np.asarray(inputs["x"], dtype=float)
    a = adjacency(n, inputs["edges"]) + sp.eye(n)
    inv = sp.diags(1.0 / np.sqrt(np.asarray(a.sum(axis=1)).ravel()))
    s = inv @ a @ inv
    return readout(s @ (s @ x), inputs)
