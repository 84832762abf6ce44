"""The scores of a sparse autoencoder's outputs: reconstruction, probing, co-occurrence.

* :func:`fvu`: fraction of variance unexplained, ``sum |x - x_hat|^2 / sum |x - mean x|^2``;
* :func:`cv_f1`: the cross-validated F1 of a logistic-regression probe on features (the
  paper's probing F1), folds fixed by the seed;
* :func:`cooccurrence` and :func:`pair_correlation`: how often two features fire together,
  and Pearson's r between a per-pair quantity (an interaction weight, a code covariance)
  and that frequency over the pairs of the most active features (the paper's r = 0.06 for
  the interaction weights vs 0.82 for the SAE's feature covariance).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def fvu(x: NDArray[np.floating], x_hat: NDArray[np.floating]) -> float:
    """Fraction of variance unexplained of ``x_hat`` for ``x`` (rows are vectors)."""
    x = np.asarray(x, dtype=np.float64)
    err = float(((x - np.asarray(x_hat, dtype=np.float64)) ** 2).sum())
    return err / float(((x - x.mean(axis=0)) ** 2).sum())


def topk_param_count(d: int, m: int) -> int:
    """Parameters of a TopK SAE with input width ``d`` and ``m`` latents (encoder, its bias,
    decoder, decoder bias): the denominator of PolySAE's parameter overhead."""
    return 2 * d * m + m + d


def cv_f1(features: NDArray[np.floating], labels: NDArray[np.integer], seed: int,
          folds: int = 5) -> float:
    """Mean F1 over stratified folds of an L2 logistic-regression probe (standardised
    features; a feature that never varies is dropped)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold
    from sklearn.preprocessing import StandardScaler

    x = np.asarray(features, dtype=np.float64)
    y = np.asarray(labels, dtype=int)
    x = x[:, x.std(axis=0) > 0]
    if x.shape[1] == 0:
        return 0.0
    scores: list[float] = []
    split = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    for train, test in split.split(x, y):
        scaler = StandardScaler().fit(x[train])
        probe = LogisticRegression(C=0.1, max_iter=2000)
        probe.fit(scaler.transform(x[train]), y[train])
        pred = probe.predict(scaler.transform(x[test]))
        tp = float(((pred == 1) & (y[test] == 1)).sum())
        fp = float(((pred == 1) & (y[test] == 0)).sum())
        fn = float(((pred == 0) & (y[test] == 1)).sum())
        scores.append(2 * tp / (2 * tp + fp + fn) if tp > 0 else 0.0)
    return float(np.mean(scores))


def cooccurrence(active: NDArray[np.bool_]) -> NDArray[np.float64]:
    """``C[i, j]``: the fraction of rows (tokens) where features i and j are both active."""
    a = np.asarray(active, dtype=np.float64)
    return (a.T @ a) / max(a.shape[0], 1)


def pair_correlation(weights: NDArray[np.floating], cooc: NDArray[np.floating],
                     features: NDArray[np.integer]) -> float:
    """Pearson's r between ``weights[i, j]`` and ``cooc[i, j]`` over the pairs i < j of
    ``features`` (NaN when either side is constant)."""
    idx = np.asarray(features, dtype=int)
    iu = np.triu_indices(len(idx), k=1)
    w = np.asarray(weights, dtype=np.float64)[np.ix_(idx, idx)][iu]
    c = np.asarray(cooc, dtype=np.float64)[np.ix_(idx, idx)][iu]
    if w.std() == 0 or c.std() == 0:
        return float("nan")
    return float(np.corrcoef(w, c)[0, 1])
