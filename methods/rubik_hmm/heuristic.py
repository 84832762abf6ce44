"""A learned search heuristic trained on HMM soft cost-to-go labels (the Rubik HMM paper's
method, our small reading) vs on scramble depth (its baseline).

The paper (ICML 2026, "trajectory-aware probabilistic framework ... HMM-style model")
replaces the usual target of a learned cost-to-go, the scramble depth ``t`` of a state on a
random walk from the goal (an upper bound that overestimates more the longer the walk), by
a *soft* label: the true depth along the walk is hidden, its step-to-step changes follow
estimated depth-change dynamics, and forward-backward inference over the whole trajectory
gives each state a posterior over its depth.

Ours, on any puzzle whose moves change the distance by one (the 8-puzzle here):

* the hidden depth ``d_t`` starts at 0 (the goal) and moves ``+1`` with probability
  ``p_up(d)``, else ``-1`` (``p_up(0) = 1``);
* ``p_up`` is estimated from the current heuristic: along the walks, the share of steps
  whose predicted depth rose, by rounded predicted depth (Laplace-smoothed);
* the emission of step ``t`` is the current heuristic's prediction, ``N(d_t, sigma^2)``
  with ``sigma`` its residual on its current targets (at least 1);
* forward-backward over the walk gives ``E[d_t]``, the soft label; the heuristic is
  retrained on it, and this repeats (``rounds``), starting from a model fit to depth.

Both arms train the same MLP (one-hot tiles, 81 -> 128 -> 128 -> 1, Adam) for the same
number of epochs on the same walks; ``depth`` keeps the scramble depth as the target for
every round. Inputs: ``states`` (every state to evaluate, uint8 (N, 9)), ``walks`` (state
indices into ``states``, (W, L + 1); column t has depth t). Config: ``rounds`` (4),
``epochs`` (per round, 5), ``hidden`` (128), ``lr``. Output: ``h``, the heuristic on every
state (float32 list), and ``p_up``, the estimated dynamics (HMM only).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from harness.plugins.plain_method import plain_method

FAMILY = "search_heuristic"
Array = NDArray[np.float64]


def _features(states: NDArray[np.uint8]) -> NDArray[np.float32]:
    """One-hot of the tile on each of the 9 cells (81 features)."""
    s = np.asarray(states, dtype=np.int64)
    out = np.zeros((len(s), 81), dtype=np.float32)
    out[np.arange(len(s))[:, None], np.arange(9)[None, :] * 9 + s] = 1.0
    return out


class _Net:
    """The MLP and its trainer (torch, one thread, seeded)."""

    def __init__(self, hidden: int, lr: float, seed: int) -> None:
        import torch

        torch.set_num_threads(1)
        torch.manual_seed(seed)
        self.torch = torch
        self.model = torch.nn.Sequential(
            torch.nn.Linear(81, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, hidden),
            torch.nn.ReLU(), torch.nn.Linear(hidden, 1))
        self.opt = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.gen = torch.Generator().manual_seed(seed)

    def fit(self, x: NDArray[np.float32], y: Array, epochs: int, batch: int = 256) -> None:
        torch = self.torch
        xt, yt = torch.from_numpy(x), torch.from_numpy(y.astype(np.float32))
        for _ in range(epochs):
            perm = torch.randperm(len(xt), generator=self.gen)
            for i in range(0, len(xt), batch):
                idx = perm[i:i + batch]
                loss = ((self.model(xt[idx])[:, 0] - yt[idx]) ** 2).mean()
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()

    def predict(self, x: NDArray[np.float32]) -> Array:
        with self.torch.no_grad():
            out = [self.model(self.torch.from_numpy(x[i:i + 65536]))[:, 0].numpy()
                   for i in range(0, len(x), 65536)]
        return np.concatenate(out).astype(np.float64)


def estimate_p_up(pred: Array, depth_max: int) -> Array:
    """P(depth rises | depth d) from a heuristic's predictions along walks ((W, L + 1)):
    the share of steps whose prediction rose, bucketed by rounded prediction, with one
    pseudo-count each way; ``p_up(0) = 1``."""
    here = np.clip(np.rint(pred[:, :-1]), 0, depth_max).astype(int).ravel()
    up = (pred[:, 1:] > pred[:, :-1]).ravel()
    ups = np.bincount(here, weights=up, minlength=depth_max + 1)
    total = np.bincount(here, minlength=depth_max + 1)
    p = (ups + 1.0) / (total + 2.0)
    p[0] = 1.0
    return np.asarray(p)


def soft_labels(pred: Array, p_up: Array, sigma: float) -> Array:
    """Forward-backward posterior mean of the hidden depth along each walk (W, L + 1),
    given depth 0 at step 0, +-1 steps with ``p_up`` and Gaussian emissions ``pred``."""
    walks, steps = pred.shape
    depths = np.arange(len(p_up), dtype=np.float64)
    trans = np.zeros((len(p_up), len(p_up)))
    trans[depths[:-1].astype(int), depths[1:].astype(int)] = p_up[:-1]
    trans[depths[1:].astype(int), depths[:-1].astype(int)] = 1.0 - p_up[1:]
    trans[-1, -2] = 1.0  # the last depth can only fall
    emit = np.exp(-0.5 * ((pred[:, :, None] - depths[None, None, :]) / sigma) ** 2) + 1e-300
    alpha = np.zeros((walks, steps, len(p_up)))
    alpha[:, 0, 0] = 1.0
    for t in range(1, steps):
        a = (alpha[:, t - 1] @ trans) * emit[:, t]
        alpha[:, t] = a / a.sum(axis=1, keepdims=True)
    beta = np.ones_like(alpha)
    for t in range(steps - 2, -1, -1):
        b = (beta[:, t + 1] * emit[:, t + 1]) @ trans.T
        beta[:, t] = b / b.sum(axis=1, keepdims=True)
    post = alpha * beta
    post /= post.sum(axis=2, keepdims=True)
    return np.asarray(post @ depths)


def _train(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int,
           hmm: bool) -> dict[str, Any]:
    states = np.asarray(inputs["states"], dtype=np.uint8)
    walks = np.asarray(inputs["walks"], dtype=np.int64)
    rounds, epochs = int(config.get("rounds", 4)), int(config.get("epochs", 5))
    net = _Net(int(config.get("hidden", 128)), float(config.get("lr", 1e-3)), seed)
    x = _features(states[walks.ravel()])
    depth = np.broadcast_to(np.arange(walks.shape[1], dtype=np.float64), walks.shape)
    target = depth.copy()
    p_up = np.array([])
    for r in range(rounds):
        net.fit(x, target.ravel(), epochs)
        if hmm and r < rounds - 1:
            pred = net.predict(x).reshape(walks.shape)
            sigma = max(float(np.sqrt(np.mean((pred - target) ** 2))), 1.0)
            p_up = estimate_p_up(pred, walks.shape[1] - 1)
            target = soft_labels(pred, p_up, sigma)
    h = net.predict(_features(states))
    return {"h": h.astype(np.float32).tolist(), "p_up": p_up.tolist()}


@plain_method("hmm-soft", family=FAMILY)
def hmm_soft(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """MLP heuristic retrained on forward-backward soft cost-to-go labels (HMM over walks)."""
    return _train(inputs, config, seed, hmm=True)


@plain_method("scramble-depth", family=FAMILY, role="baseline")
def scramble_depth(inputs: Mapping[str, Any], config: Mapping[str, Any],
                   seed: int) -> dict[str, Any]:
    """The same MLP and budget trained on scramble depth (the step index of the walk)."""
    return _train(inputs, config, seed, hmm=False)
