"""MetaMoE (our small reading): diversity-aware public proxies train the router of a mixture
of privately trained experts; against relevance-only proxies, random proxies and a uniform
ensemble.

MetaMoE (ICML 2026; code github.com/ws-jiang/MetaMoE): each client trains an expert on its
private domain; nothing private leaves the client. To learn a router, each client instead
picks samples of a *public* pool that stand in for its data (*proxies*), and the router is
trained to send each client's proxies to that client's expert. The paper's point is how the
proxies are chosen: **diversity-aware selection**, relevant to the client's domain *and*
spread over it, so that they approximate the private distribution rather than its mode.

Ours, in numpy and sklearn, per client ``k`` (all run here, but each step uses only what
that client could see):

* expert: logistic regression on the client's private ``(x, y)`` (a constant if the
  client's labels are all one class, which a multi-modal domain cut by a linear rule can
  give);
* relevance of a public point (config ``relevance``): ``prototype`` (default) minus its
  squared distance to the client's mean private point, or ``density``, the log kernel
  density of the client's private points at it; the client ranks the pool by it (on
  development seeds 0-3 the prototype made the better router for both selections);
* ``metamoe``: from the ``candidates x m`` most relevant points, greedy selection of ``m``
  maximising (normalised relevance + ``diversity`` x normalised distance to the points
  already chosen), i.e. relevant and spread;
* ``relevance-proxies`` (the baseline, the paper's ablation without diversity): the ``m``
  most relevant points;
* ``random-proxies`` (reference): ``m`` random pool points;
* ``uniform-ensemble`` (reference): no router, the experts' mean probability.

The router (all but the ensemble) is a multinomial logistic regression on the pooled
proxies labelled by the client that chose them; a test point goes to its argmax expert.
Not implemented: the paper's proxy-aligned expert training and its context-aware router.

Inputs: ``private_x``, ``private_y`` (one array per client), ``public_x``, ``test_x``.
Config: ``m`` (proxies per client, 20), ``candidates`` (4: the multiple of ``m`` that
diversity picks from), ``diversity`` (1.0), ``relevance``. Outputs: ``pred``,
``route`` (the chosen client per test point; -1 for the ensemble) and ``selected`` (the
pool indices each client chose).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray
from scipy.special import logsumexp

from harness.plugins.plain_method import plain_method

if TYPE_CHECKING:  # imported where fitted: `harness list` registers this without sklearn
    from sklearn.linear_model import LogisticRegression

FAMILY = "private_moe"
Array = NDArray[np.float64]


class _Constant:
    """The expert of a client whose private labels are all one class."""

    def __init__(self, label: int) -> None:
        self.label = label

    def predict(self, x: Array) -> NDArray[np.int64]:
        return np.full(len(x), self.label, dtype=np.int64)

    def predict_proba(self, x: Array) -> Array:
        return np.tile([1.0 - self.label, float(self.label)], (len(x), 1))


def _expert(x: Array, y: Any) -> LogisticRegression | _Constant:
    y = np.asarray(y)
    if len(np.unique(y)) < 2:
        return _Constant(int(y[0]))
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(max_iter=1000).fit(x, y)


def _experts(xs: Sequence[Array], ys: Sequence[Any]) -> list[LogisticRegression | _Constant]:
    return [_expert(x, y) for x, y in zip(xs, ys, strict=True)]


def _sqdist(a: Array, b: Array) -> Array:
    return np.maximum((a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2 * a @ b.T, 0.0)


def relevance(private: Array, pool: Array) -> Array:
    """Log kernel density of a client's private points at each pool point (computed on the
    client; only the scores leave it). Bandwidth: the median private pairwise distance."""
    sq = _sqdist(pool, private)
    inner = _sqdist(private, private)
    h2 = float(np.median(inner[np.triu_indices(len(private), 1)]))
    return np.asarray(logsumexp(-sq / (2 * h2 * 0.25), axis=1))


def diverse_top(pool: Array, rel: Array, m: int, candidates: int,
                diversity: float) -> NDArray[np.int64]:
    """Greedy: among the ``candidates`` most relevant points, repeatedly take the one with
    the highest normalised relevance + ``diversity`` x normalised distance to those taken."""
    cand = np.argsort(-rel)[:candidates]
    r = rel[cand]
    r = (r - r.min()) / max(float(np.ptp(r)), 1e-12)
    points = pool[cand]
    chosen = [0]
    dist = np.linalg.norm(points - points[0], axis=1)
    scale = max(float(dist.max()), 1e-12)
    for _ in range(min(m, len(cand)) - 1):
        gain = r + diversity * dist / scale
        gain[chosen] = -np.inf
        nxt = int(np.argmax(gain))
        chosen.append(nxt)
        dist = np.minimum(dist, np.linalg.norm(points - points[nxt], axis=1))
    return cand[np.asarray(chosen)]


def _route_and_predict(selected: Sequence[NDArray[Any]], inputs: Mapping[str, Any],
                       seed: int) -> dict[str, Any]:
    pool = np.asarray(inputs["public_x"], dtype=float)
    test = np.asarray(inputs["test_x"], dtype=float)
    experts = _experts([np.asarray(x, dtype=float) for x in inputs["private_x"]],
                       inputs["private_y"])
    x = np.vstack([pool[s] for s in selected])
    label = np.concatenate([np.full(len(s), k) for k, s in enumerate(selected)])
    from sklearn.linear_model import LogisticRegression

    router = LogisticRegression(max_iter=2000, random_state=seed).fit(x, label)
    route = router.classes_[router.predict_proba(test).argmax(axis=1)]
    per_expert = np.column_stack([e.predict(test) for e in experts])
    pred = per_expert[np.arange(len(test)), route]
    return {"pred": pred.tolist(), "route": route.tolist(),
            "selected": [s.tolist() for s in selected]}


def _relevances(inputs: Mapping[str, Any], kind: str) -> tuple[Array, list[Array]]:
    pool = np.asarray(inputs["public_x"], dtype=float)
    privs = [np.asarray(x, dtype=float) for x in inputs["private_x"]]
    if kind == "prototype":
        return pool, [-_sqdist(pool, p.mean(axis=0, keepdims=True))[:, 0] for p in privs]
    return pool, [relevance(p, pool) for p in privs]


@plain_method("metamoe", family=FAMILY)
def metamoe(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """Diversity-aware proxies (relevant and spread over the domain) train the router."""
    m = int(config.get("m", 20))
    cands = int(config.get("candidates", 4)) * m
    div = float(config.get("diversity", 1.0))
    pool, rels = _relevances(inputs, str(config.get("relevance", "prototype")))
    return _route_and_predict([diverse_top(pool, r, m, cands, div) for r in rels], inputs, seed)


@plain_method("relevance-proxies", family=FAMILY, role="baseline")
def relevance_proxies(inputs: Mapping[str, Any], config: Mapping[str, Any],
                      seed: int) -> dict[str, Any]:
    """Relevance-only proxies (each client's ``m`` most relevant pool points)."""
    m = int(config.get("m", 20))
    _, rels = _relevances(inputs, str(config.get("relevance", "prototype")))
    return _route_and_predict([np.argsort(-r)[:m] for r in rels], inputs, seed)


@plain_method("random-proxies", family=FAMILY, role="reference")
def random_proxies(inputs: Mapping[str, Any], config: Mapping[str, Any],
                   seed: int) -> dict[str, Any]:
    """``m`` random pool points per client as its proxies (no selection)."""
    m = int(config.get("m", 20))
    rng = np.random.default_rng(seed)
    n = len(inputs["public_x"])
    picks = [rng.choice(n, size=m, replace=False) for _ in inputs["private_x"]]
    return _route_and_predict(picks, inputs, seed)


@plain_method("uniform-ensemble", family=FAMILY, role="reference")
def uniform_ensemble(inputs: Mapping[str, Any], config: Mapping[str, Any],
                     seed: int) -> dict[str, Any]:
    """No router: the experts' mean probability of class 1."""
    test = np.asarray(inputs["test_x"], dtype=float)
    experts = _experts([np.asarray(x, dtype=float) for x in inputs["private_x"]],
                       inputs["private_y"])
    prob = np.mean([e.predict_proba(test)[:, 1] for e in experts], axis=0)
    return {"pred": (prob > 0.5).astype(int).tolist(), "route": [-1] * len(test),
            "selected": []}
