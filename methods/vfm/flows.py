"""Rectified flow, its one-step flow map, the VFM noise adapter, and a guided multi-step
sampler, in torch on the CPU (tiny MLPs on 2-D data).

Variational Flow Maps (Mammadov et al., arXiv:2603.07276) condition a one-step generator
``x = f(z)`` on an observation ``y`` by learning the *noise*: an amortised Gaussian adapter
``q(z | y) = N(mu(y), diag s(y)^2)`` whose samples, pushed through the flow map, follow the
posterior ``p(x | y)``. Our small reading of the variational objective, per training draw
``x`` of the prior and its simulated measurement ``y = A x + e``::

    E_{z ~ q(z|y)} |y - A f(z)|^2 / (2 sigma^2)  +  KL(q(z|y) || N(0, I))
      + lam * E_{z0 ~ N(0, I)} |f(z0) - Phi(z0)|^2

(the negative ELBO of ``y`` with the flow map as decoder, plus the flow-map term that keeps
``f`` a map of the *prior*: ``Phi`` is the teacher's ODE solution). ``joint=True`` trains
the adapter and the map together on it (the paper's method); ``joint=False`` freezes the
distilled map and trains the adapter only (the paper's ablation).

The baseline is what VFM replaces: guiding the teacher's sampling path. ``guided_sample``
integrates the rectified-flow ODE with Euler steps and adds, at each step, the gradient of
``log N(y; A x1_hat(x_t), sigma^2 + r_t^2 A A^T)`` (the PiGDM approximation of ``p(y | x_t)``
with ``x1_hat`` the network's denoised guess and ``r_t^2 = (1-t)^2 / (t^2 + (1-t)^2)``,
the posterior variance of unit-variance data), turned into a velocity by Tweedie's formula:
``x1_hat_y = x1_hat + (1-t)^2 / t * grad``. One network evaluation (plus one backward pass)
per step; no tuned guidance scale.

Everything runs in standardised coordinates (the training draws' mean and RMS radius); the
operator and noise level are mapped along. Seeds: ``torch.manual_seed`` and a numpy
generator from ``seed``; one thread (restored afterwards).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]

DEFAULTS: dict[str, Any] = {
    "width": 64, "teacher_steps": 1500, "distill_steps": 1200, "adapter_steps": 1500,
    "batch": 256, "lr": 2e-3, "ode_steps": 32, "distill_pairs": 8192, "lam": 1.0,
    "guided_steps": 32, "n_samples": 256,
}


@contextmanager
def _one_thread() -> Iterator[None]:
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _mlp(d_in: int, d_out: int, width: int) -> Any:
    from torch import nn

    return nn.Sequential(nn.Linear(d_in, width), nn.SiLU(), nn.Linear(width, width), nn.SiLU(),
                         nn.Linear(width, width), nn.SiLU(), nn.Linear(width, d_out))


class _Velocity:
    """``v(x, t)``: an MLP on ``[x, t]``."""

    def __init__(self, width: int) -> None:
        self.net = _mlp(3, 2, width)

    def __call__(self, x: Any, t: Any) -> Any:
        import torch

        return self.net(torch.cat([x, t.expand(x.shape[0], 1)], dim=1))


class _Map:
    """The one-step flow map ``f(z) = z + g(z)``."""

    def __init__(self, width: int) -> None:
        self.net = _mlp(2, 2, width)

    def __call__(self, z: Any) -> Any:
        return z + self.net(z)


@dataclass
class Standardiser:
    """``u = (x - mean) / scale``; the measurement ``y = A x + e`` becomes
    ``(y - A mean) / scale = A u + e / scale``."""

    mean: Array
    scale: float

    @classmethod
    def fit(cls, x: Array) -> Standardiser:
        mean = x.mean(axis=0)
        return cls(mean, float(np.sqrt(((x - mean) ** 2).sum(axis=1).mean() / 2)))

    def to_u(self, x: Array) -> Array:
        return (x - self.mean) / self.scale

    def to_x(self, u: Array) -> Array:
        return u * self.scale + self.mean

    def obs(self, y: Array, a: Array, sigma: float) -> tuple[Array, float]:
        return (y - a @ self.mean) / self.scale, sigma / self.scale


def _adam(params: Any, lr: float) -> Any:
    import torch

    return torch.optim.Adam(params, lr=lr)


def train_teacher(u: Array, cfg: Mapping[str, Any], gen: Any) -> _Velocity:
    """Rectified flow on standardised draws: regress ``x1 - x0`` at ``t x1 + (1-t) x0``."""
    import torch

    data = torch.as_tensor(u, dtype=torch.float32)
    vel = _Velocity(int(cfg["width"]))
    opt = _adam(vel.net.parameters(), float(cfg["lr"]))
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, int(cfg["teacher_steps"]))
    for _ in range(int(cfg["teacher_steps"])):
        idx = torch.randint(0, len(data), (int(cfg["batch"]),), generator=gen)
        x1 = data[idx]
        x0 = torch.randn(x1.shape, generator=gen)
        t = torch.rand((x1.shape[0], 1), generator=gen)
        pred = vel.net(torch.cat([t * x1 + (1 - t) * x0, t], dim=1))
        loss = ((pred - (x1 - x0)) ** 2).sum(dim=1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    return vel


def ode(vel: _Velocity, z: Any, steps: int) -> Any:
    """The teacher's ODE from noise ``z`` (t = 0) to data (t = 1), midpoint steps."""
    import torch

    x = z
    with torch.no_grad():
        for k in range(steps):
            t = torch.full((1, 1), k / steps)
            mid = x + 0.5 / steps * vel(x, t)
            x = x + vel(mid, t + 0.5 / steps) / steps
    return x


def distill_map(vel: _Velocity, cfg: Mapping[str, Any], gen: Any) -> tuple[_Map, Any, Any]:
    """A one-step map regressed on (noise, ODE endpoint) pairs; returns the map and pairs."""
    import torch

    z = torch.randn((int(cfg["distill_pairs"]), 2), generator=gen)
    target = ode(vel, z, int(cfg["ode_steps"]))
    fmap = _Map(int(cfg["width"]))
    opt = _adam(fmap.net.parameters(), float(cfg["lr"]))
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, int(cfg["distill_steps"]))
    for _ in range(int(cfg["distill_steps"])):
        idx = torch.randint(0, len(z), (int(cfg["batch"]),), generator=gen)
        loss = ((fmap(z[idx]) - target[idx]) ** 2).sum(dim=1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    return fmap, z, target


def train_adapter(fmap: _Map, pairs: tuple[Any, Any], u: Array, a: Array, sigma_u: float,
                  cfg: Mapping[str, Any], gen: Any, *, joint: bool) -> Any:
    """The amortised Gaussian noise adapter ``y -> (mu, log s)`` on the variational
    objective; with ``joint`` the flow map is trained on it too (and kept a prior map by
    the ``lam`` term)."""
    import torch

    data = torch.as_tensor(u, dtype=torch.float32)
    at = torch.as_tensor(a, dtype=torch.float32)
    m = a.shape[0]
    adapter = _mlp(m, 4, int(cfg["width"]))
    params = list(adapter.parameters()) + (list(fmap.net.parameters()) if joint else [])
    if not joint:
        for p in fmap.net.parameters():
            p.requires_grad_(False)
    opt = _adam(params, float(cfg["lr"]))
    steps = int(cfg["adapter_steps"])
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    z0, target = pairs
    lam, batch = float(cfg["lam"]), int(cfg["batch"])
    for _ in range(steps):
        idx = torch.randint(0, len(data), (batch,), generator=gen)
        y = data[idx] @ at.T + sigma_u * torch.randn((batch, m), generator=gen)
        out = adapter(y)
        mu, log_s = out[:, :2], out[:, 2:].clamp(-6.0, 2.0)
        z = mu + torch.exp(log_s) * torch.randn(mu.shape, generator=gen)
        fit = ((y - fmap(z) @ at.T) ** 2).sum(dim=1) / (2 * sigma_u**2)
        kl = 0.5 * (mu**2 + torch.exp(2 * log_s) - 1 - 2 * log_s).sum(dim=1)
        loss = (fit + kl).mean()
        if joint:
            j = torch.randint(0, len(z0), (batch,), generator=gen)
            loss = loss + lam * ((fmap(z0[j]) - target[j]) ** 2).sum(dim=1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    return adapter


def adapter_sample(fmap: _Map, adapter: Any, y: Array, n: int, gen: Any) -> Array:
    """``n`` one-step posterior draws per observation: ``f(mu(y) + s(y) eps)``."""
    import torch

    with torch.no_grad():
        yt = torch.as_tensor(y, dtype=torch.float32)
        out = adapter(yt)
        mu, log_s = out[:, :2], out[:, 2:].clamp(-6.0, 2.0)
        eps = torch.randn((len(y), n, 2), generator=gen)
        z = mu[:, None, :] + torch.exp(log_s)[:, None, :] * eps
        x = fmap(z.reshape(-1, 2)).reshape(len(y), n, 2)
    return x.double().numpy()


def guided_sample(vel: _Velocity, y: Array, a: Array, sigma_u: float, n: int, steps: int,
                  gen: Any) -> Array:
    """PiGDM-guided Euler sampling of the rectified flow, ``n`` draws per observation."""
    import torch

    at = torch.as_tensor(a, dtype=torch.float32)
    yt = torch.as_tensor(y, dtype=torch.float32).repeat_interleave(n, dim=0)
    x = torch.randn((len(y) * n, 2), generator=gen)
    aat = float((a @ a.T).trace())
    for k in range(steps):
        t = k / steps
        tt = torch.full((1, 1), t)
        xg = x.detach().requires_grad_(True)
        v = vel(xg, tt)
        x1_hat = xg + (1 - t) * v
        if t > 0:
            r2 = (1 - t) ** 2 / (t**2 + (1 - t) ** 2)
            resid = yt - x1_hat @ at.T
            logp = -(resid**2).sum() / (2 * (sigma_u**2 + r2 * aat))
            (grad,) = torch.autograd.grad(logp, xg)
            x1_y = x1_hat.detach() + (1 - t) ** 2 / t * grad
        else:
            x1_y = x1_hat.detach()
        v_y = (x1_y - x) / (1 - t)
        x = (x + v_y / steps).detach()
    return x.double().numpy().reshape(len(y), n, 2)


def run(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int,
        mode: str) -> dict[str, Any]:
    """Train what ``mode`` needs and draw ``n_samples`` posterior samples per observation.

    ``mode``: ``vfm`` (adapter + map trained jointly), ``vfm-frozen`` (adapter on the
    distilled map, frozen), ``guided`` (the teacher with guided multi-step sampling)."""
    import torch

    cfg = {**DEFAULTS, **{k: v for k, v in config.items() if k in DEFAULTS}}
    x_train = np.asarray(inputs["x_train"], dtype=float)
    a = np.asarray(inputs["a"], dtype=float)
    y = np.asarray(inputs["y"], dtype=float)
    sigma = float(inputs["sigma"])
    with _one_thread():
        torch.manual_seed(seed)
        gen = torch.Generator().manual_seed(seed)
        std = Standardiser.fit(x_train)
        u = std.to_u(x_train)
        y_u, sigma_u = std.obs(y, a, sigma)
        vel = train_teacher(u, cfg, gen)
        n = int(cfg["n_samples"])
        if mode == "guided":
            steps = int(cfg["guided_steps"])
            samples = guided_sample(vel, y_u, a, sigma_u, n, steps, gen)
            nfe = float(steps)
        else:
            fmap, z0, target = distill_map(vel, cfg, gen)
            adapter = train_adapter(fmap, (z0, target), u, a, sigma_u, cfg, gen,
                                    joint=mode == "vfm")
            samples = adapter_sample(fmap, adapter, y_u, n, gen)
            nfe = 1.0
            with torch.no_grad():
                prior_err = float(((fmap(z0[:2048]) - target[:2048]) ** 2).sum(dim=1)
                                  .mean().sqrt())
    out: dict[str, Any] = {"samples": std.to_x(samples), "nfe": nfe}
    if mode != "guided":
        out["map_prior_rmse"] = prior_err * std.scale
    return out
