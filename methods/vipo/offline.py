"""VIPO (our small reading) against its base algorithm: uncertainty-penalised model-based
offline RL (MOPO-style) whose dynamics model is, or is not, also trained to make the value
it implies consistent with the value learned directly from the offline data.

VIPO (ICML 2026; code anonymous.4open.science/r/vipo2025-8FD4): "the model is learned by
additionally minimizing the inconsistency between the value learned directly from the
offline data and the value estimated from the model", a general add-on to model-based
offline RL. Ours, on a pendulum (observations ``(cos, sin, thdot)``, 9 torques):

* data value ``V_D``: ridge regression of the discounted return-to-go (gamma 0.95) of the
  dataset's own episodes on 200 random Fourier features of the observation;
* model: an ensemble of 5 MLPs (4 -> 64 -> 64 -> 4: change of observation and reward),
  each on its own bootstrap minibatches, Adam, ``model_steps`` steps;
  ``mopo`` minimises the squared error of the normalised targets; ``vipo`` adds
  ``alpha`` x the squared inconsistency, on windows of ``k`` dataset steps, between the
  data's value of the window, ``sum_j gamma^j r_j + gamma^k V_D(s_k)`` (its rewards, then
  ``V_D`` where the data went), and the model's estimate of the same window,
  ``sum_j gamma^j r_hat_j + gamma^k V_D(s_hat_k)`` (the model rolled out from ``s_0`` under
  the dataset's actions), in units of the return's spread. (Against ``V_D(s_0)`` alone the
  target carries the behaviour policy's action noise, which a model cannot and should not
  match; on development seeds that version wrecked the model: normalised return 7 vs 100.)
* policy, the same for both (MOPO's pessimistic MDP): value iteration over a 51 x 41 grid
  of (th, thdot) with the ensemble-mean transition and reward minus ``penalty`` x the
  ensemble's disagreement (the largest distance of a member's prediction from the mean).

Inputs: ``obs``, ``action``, ``reward``, ``next_obs`` (flat transitions), ``episode`` and
``t`` (for windows and returns), ``grid`` (``n_th``, ``n_dot``), ``actions``, and queries
for the model (``query_obs``, ``query_action``; ``query_start``, ``query_actions`` for
open-loop rollouts). Outputs: ``policy`` (an action index per grid cell), ``pred_next``
and ``pred_reward`` (the queries' one-step predictions), ``pred_rollout`` (open-loop),
``mean_penalty`` (the mean disagreement over grid cells and actions),
``value_inconsistency`` (the trained model's mean squared inconsistency over all data
windows, both arms: what VIPO's term minimises).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from harness.plugins.plain_method import plain_method

FAMILY = "offline_mbrl"
Array = NDArray[np.float64]


def _returns(reward: Array, episode: NDArray[np.int64], t: NDArray[np.int64],
             gamma: float) -> Array:
    """Discounted return-to-go within each episode (data sorted by episode, then t)."""
    out = np.zeros_like(reward)
    running = 0.0
    for i in range(len(reward) - 1, -1, -1):
        if i == len(reward) - 1 or episode[i + 1] != episode[i]:
            running = 0.0
        running = reward[i] + gamma * running
        out[i] = running
    del t
    return out


class _Ensemble:
    """Five MLPs evaluated together (batched weights), in normalised units."""

    def __init__(self, torch: Any, members: int, hidden: int, seed: int) -> None:
        gen = torch.Generator().manual_seed(seed)

        def layer(i: int, o: int) -> tuple[Any, Any]:
            w = torch.randn(members, i, o, generator=gen) * (1.0 / i) ** 0.5
            return w.requires_grad_(), torch.zeros(members, 1, o, requires_grad=True)

        self.torch = torch
        self.layers = [layer(4, hidden), layer(hidden, hidden), layer(hidden, 4)]

    def params(self) -> list[Any]:
        return [p for pair in self.layers for p in pair]

    def __call__(self, x: Any) -> Any:
        """(members, batch, 4) -> (members, batch, 4)."""
        for i, (w, b) in enumerate(self.layers):
            x = self.torch.baddbmm(b, x, w)
            if i < len(self.layers) - 1:
                x = self.torch.relu(x)
        return x


def _train(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int,
           vipo: bool) -> dict[str, Any]:
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    o = np.asarray(inputs["obs"], dtype=float)
    a = np.asarray(inputs["action"], dtype=float)[:, None]
    r = np.asarray(inputs["reward"], dtype=float)
    o2 = np.asarray(inputs["next_obs"], dtype=float)
    episode = np.asarray(inputs["episode"], dtype=np.int64)
    t_idx = np.asarray(inputs["t"], dtype=np.int64)
    gamma, k = float(config.get("gamma", 0.95)), int(config.get("k", 5))
    alpha, penalty = float(config.get("alpha", 0.1)), float(config.get("penalty", 1.0))
    steps, members = int(config.get("model_steps", 500)), 5

    x = np.column_stack([o, a])
    y = np.column_stack([o2 - o, r])
    x_mu, x_sd = x.mean(0), x.std(0) + 1e-8
    y_mu, y_sd = y.mean(0), y.std(0) + 1e-8

    # the data value V_D: random Fourier features -> ridge on the return-to-go
    freq = rng.normal(size=(3, 200)) * np.array([[1.0], [1.0], [0.25]])
    phase = rng.uniform(0, 2 * np.pi, 200)
    feats = np.cos(o @ freq + phase)
    ret = _returns(r, episode, t_idx, gamma)
    w_v = np.linalg.solve(feats.T @ feats + 1e-2 * np.eye(200), feats.T @ ret)
    v_sd = float(ret.std()) + 1e-8

    tt = {name: torch.tensor(v, dtype=torch.float32) for name, v in
          {"x_mu": x_mu, "x_sd": x_sd, "y_mu": y_mu, "y_sd": y_sd, "freq": freq,
           "phase": phase, "w_v": w_v}.items()}

    def v_data(obs_t: Any) -> Any:
        return torch.cos(obs_t @ tt["freq"] + tt["phase"]) @ tt["w_v"]

    net = _Ensemble(torch, members, int(config.get("hidden", 64)), seed)
    opt = torch.optim.Adam(net.params(), lr=float(config.get("lr", 1e-3)))
    xt = (torch.tensor(x, dtype=torch.float32) - tt["x_mu"]) / tt["x_sd"]
    yt = (torch.tensor(y, dtype=torch.float32) - tt["y_mu"]) / tt["y_sd"]
    # windows of k steps inside one episode: start indices whose next k-1 rows follow on
    starts = np.flatnonzero(np.array([i + k <= len(o) and episode[i + k - 1] == episode[i]
                                      and t_idx[i + k - 1] == t_idx[i] + k - 1
                                      for i in range(len(o))]))
    obs_all = torch.tensor(o, dtype=torch.float32)
    act_all = torch.tensor(a, dtype=torch.float32)
    # the data's value of each window: its k rewards, then V_D where the data went
    disc = gamma ** np.arange(k)
    safe = np.minimum(np.arange(len(o))[:, None] + np.arange(k)[None, :], len(o) - 1)
    v_next = v_data(torch.tensor(o2[safe[:, -1]], dtype=torch.float32)).detach()
    v_window = torch.tensor(r[safe] @ disc, dtype=torch.float32) + gamma**k * v_next
    batch = 256

    def inconsistency(s0: Any) -> Any:
        """Squared (data value - model value) of the windows starting at ``s0``, per
        member, in units of the return's spread."""
        state = obs_all[s0].expand(members, len(s0), 3)
        total = torch.zeros(members, len(s0))
        for j in range(k):
            inp = (torch.cat([state, act_all[s0 + j].expand(members, len(s0), 1)], -1)
                   - tt["x_mu"]) / tt["x_sd"]
            out = net(inp) * tt["y_sd"] + tt["y_mu"]
            total = total + gamma**j * out[..., 3]
            state = state + out[..., :3]
        estimate = total + gamma**k * v_data(state)
        return ((estimate - v_window[s0]) / v_sd) ** 2

    for _ in range(steps):
        idx = torch.from_numpy(rng.integers(0, len(o), (members, batch)))
        loss = ((net(xt[idx]) - yt[idx]) ** 2).mean()
        if vipo and alpha > 0:
            loss = loss + alpha * inconsistency(torch.from_numpy(rng.choice(starts, batch))).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()

    with torch.no_grad():  # the trained model's inconsistency on every data window
        value_gap = float(inconsistency(torch.from_numpy(starts)).mean())

    def predict(obs_q: Array, act_q: Array) -> tuple[Array, Array]:
        """Each member's (next obs, reward), (members, n, 4)."""
        with torch.no_grad():
            inp = (torch.tensor(np.column_stack([obs_q, act_q]), dtype=torch.float32)
                   - tt["x_mu"]) / tt["x_sd"]
            out = (net(inp.expand(members, -1, -1)) * tt["y_sd"] + tt["y_mu"]).numpy()
        out = out.astype(np.float64)
        out[..., :3] += obs_q[None]
        return out, out.mean(0)

    # MOPO's pessimistic MDP on the grid, solved by value iteration
    grid = inputs["grid"]
    n_th, n_dot = int(grid["n_th"]), int(grid["n_dot"])
    th, dot = np.meshgrid(np.linspace(-np.pi, np.pi, n_th, endpoint=False),
                          np.linspace(-8.0, 8.0, n_dot), indexing="ij")
    actions = np.asarray(inputs["actions"], dtype=float)
    cells = np.column_stack([np.cos(th.ravel()), np.sin(th.ravel()), dot.ravel()])
    obs_q = np.repeat(cells, len(actions), axis=0)
    act_q = np.tile(actions, len(cells))
    every, mean = predict(obs_q, act_q)
    spread = np.linalg.norm(every - mean[None], axis=-1).max(axis=0)
    shape = (len(cells), len(actions))
    next_th = np.arctan2(mean[:, 1], mean[:, 0]).reshape(shape)
    next_dot = np.clip(mean[:, 2], -8.0, 8.0).reshape(shape)
    reward = (mean[:, 3] - penalty * spread).reshape(shape)
    policy = _value_iteration(next_th, next_dot, reward, n_th, n_dot)

    q_pred = predict(np.asarray(inputs["query_obs"], float),
                     np.asarray(inputs["query_action"], float))[1]
    cur: Array = np.asarray(inputs["query_start"], dtype=float)
    seq = np.asarray(inputs["query_actions"], dtype=float)
    rollout = []
    for j in range(seq.shape[1]):
        cur = predict(cur, seq[:, j])[1][:, :3]
        rollout.append(cur)
    return {"policy": policy.tolist(), "pred_next": q_pred[:, :3].tolist(),
            "pred_reward": q_pred[:, 3].tolist(), "mean_penalty": float(spread.mean()),
            "value_inconsistency": value_gap,
            "pred_rollout": np.stack(rollout, 1).tolist()}


def _value_iteration(next_th: Array, next_dot: Array, reward: Array, n_th: int, n_dot: int,
                     gamma: float = 0.98, iters: int = 400) -> NDArray[np.int64]:
    """Greedy policy of a tabular model, next states interpolated bilinearly on the grid."""
    fi = (next_th + np.pi) % (2 * np.pi) / (2 * np.pi) * n_th
    fj = np.clip((next_dot + 8.0) / 16.0 * (n_dot - 1), 0, n_dot - 1 - 1e-9)
    i0, j0 = np.floor(fi).astype(int), np.floor(fj).astype(int)
    wi, wj = fi - i0, fj - j0
    i0, i1, j1 = i0 % n_th, (i0 + 1) % n_th, np.minimum(j0 + 1, n_dot - 1)
    idx = [i0 * n_dot + j0, i0 * n_dot + j1, i1 * n_dot + j0, i1 * n_dot + j1]
    w = [(1 - wi) * (1 - wj), (1 - wi) * wj, wi * (1 - wj), wi * wj]
    v = np.zeros(n_th * n_dot)
    q = reward
    for _ in range(iters):
        q = reward + gamma * sum(wk * v[ik] for wk, ik in zip(w, idx, strict=True))
        v = q.max(axis=1)
    return np.asarray(q.argmax(axis=1))


@plain_method("vipo", family=FAMILY)
def vipo(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """MOPO-style offline MBRL whose ensemble also minimises value inconsistency (VIPO)."""
    return _train(inputs, config, seed, vipo=True)


@plain_method("mopo", family=FAMILY, role="baseline")
def mopo(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """Uncertainty-penalised offline MBRL with a plain (squared-error) ensemble."""
    return _train(inputs, config, seed, vipo=False)
