"""Few-shot adaptation by flow matching from image features to text roots: Euclidean
(the baseline) and path-decoupled hyperbolic (HFM), in torch on the CPU.

Li et al., "Path-Decoupled Hyperbolic Flow Matching for Few-Shot Adaptation" (ICML 2026),
arXiv:2602.20479, transports a frozen model's image features to the text embedding of
their class and classifies by the nearest text root after transport. Ours, small:

* ``euclid`` (the baseline, flow matching in flat space as in prior FM adapters): an MLP
  velocity ``v(x, t)`` regressed on straight paths ``x_t = (1-t) x + t r_y`` from each
  support feature to its class root, target ``r_y - x``; at inference ``steps`` Euler steps,
  then the nearest root (Euclidean distance).
* ``hfm`` (the paper's method, our reading of its three parts) on the Lorentz model of
  curvature -1, ``{x : <x, x>_L = -1, x_0 > 0}`` in ``R^{d+1}``:
  1. *centripetal anchoring*: roots are placed near the origin (tangent norm ``root_radius``
     at the origin, directions and relative norms kept) and image features pushed out to
     the boundary (mean tangent norm ``leaf_radius``), both by the origin's exponential map;
  2. *path-decoupled objective*: the same MLP (one more output, projected onto the tangent
     space at ``x_t``) regressed on the geodesic's velocity at ``x_t = exp_x(t log_x r_y)``,
     plus step-wise supervision: the ``steps``-step integration (``x <- exp_x(v / steps)``) is
     unrolled and each step's point is pulled to the geodesic's point at that time
     (squared Lorentz distance), keeping every trajectory in its class's corridor;
  3. *adaptive diameter-based stopping*: a query stops moving once it is within half the
     smallest root-to-root distance of some root (the roots' own scale); then the nearest
     root (Lorentz distance).
* ``proto`` (a reference, no flow): the nearest support-class mean in the original space.

Both flows use the same MLP (width, depth), optimiser, learning rate, number of updates and
inference steps; each run seeds torch from ``seed`` and uses one thread (restored after).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]

DEFAULTS: dict[str, Any] = {"width": 128, "train_steps": 400, "batch": 64, "lr": 2e-3,
                            "steps": 8, "root_radius": 1.0, "leaf_radius": 2.0,
                            "step_weight": 0.1, "stop": True, "clip": 1.0}
EPS = 1e-6
MAX_STEP = 1.0


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
                         nn.Linear(width, d_out))


# ----------------------------------------------------------------------------- Lorentz


def minkowski(x: Any, y: Any) -> Any:
    """``<x, y>_L = -x_0 y_0 + sum_i x_i y_i`` over the last axis."""
    return -x[..., :1] * y[..., :1] + (x[..., 1:] * y[..., 1:]).sum(dim=-1, keepdim=True)


def expmap0(v: Any) -> Any:
    """The origin's exponential map of spatial tangent vectors ``(.., d) -> (.., d+1)``."""
    import torch

    n = v.norm(dim=-1, keepdim=True).clamp_min(EPS)
    return torch.cat([torch.cosh(n), torch.sinh(n) * v / n], dim=-1)


def logmap0(x: Any) -> Any:
    """The origin's logarithm map ``(.., d+1) -> (.., d)`` (inverse of :func:`expmap0`)."""
    import torch

    spatial = x[..., 1:]
    n = spatial.norm(dim=-1, keepdim=True).clamp_min(EPS)
    return torch.acosh(x[..., :1].clamp_min(1 + EPS)) * spatial / n


def expmap(x: Any, u: Any) -> Any:
    """``exp_x(u)`` for a tangent vector ``u`` at ``x``."""
    import torch

    n = minkowski(u, u).clamp_min(EPS**2).sqrt()
    step = n.clamp_max(MAX_STEP)  # an untrained field must not fling points to overflow
    out = torch.cosh(step) * x + torch.sinh(step) * u / n
    return onto(out[..., 1:])


def onto(spatial: Any) -> Any:
    """The hyperboloid point with these spatial coordinates (``x_0 = sqrt(1 + |x|^2)``):
    re-projecting after each step keeps float32 round-off from leaving the manifold."""
    import torch

    return torch.cat([torch.sqrt(1 + (spatial**2).sum(dim=-1, keepdim=True)), spatial], dim=-1)


def project(x: Any, v: Any) -> Any:
    """The tangent-space part of ambient ``v`` at ``x``: ``v + <x, v>_L x``."""
    return v + minkowski(x, v) * x


def distance(x: Any, y: Any) -> Any:
    """Lorentz (geodesic) distance, ``arccosh(-<x, y>_L)``."""
    import torch

    return torch.acosh((-minkowski(x, y)).clamp_min(1 + 1e-4)).squeeze(-1)


def geodesic(x: Any, y: Any, t: Any) -> tuple[Any, Any]:
    """Point and velocity at time ``t`` of the unit-time geodesic from ``x`` to ``y``."""
    import torch

    d = distance(x, y).unsqueeze(-1)
    direction = y + minkowski(x, y) * x  # tangent at x, towards y
    unit = direction / minkowski(direction, direction).clamp_min(EPS**2).sqrt()
    point = torch.cosh(t * d) * x + torch.sinh(t * d) * unit
    velocity = d * (torch.sinh(t * d) * x + torch.cosh(t * d) * unit)
    return point, velocity


# ----------------------------------------------------------------------------- flows


def _step(opt: Any, net: Any, loss: Any, clip: float) -> None:
    """One Adam update with the gradient norm clipped at ``clip`` (both flows alike)."""
    import torch

    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(net.parameters(), clip)
    opt.step()


def _train_euclid(sx: Any, target: Any, cfg: Mapping[str, Any], gen: Any) -> Any:
    import torch

    d = sx.shape[1]
    net = _mlp(d + 1, d, int(cfg["width"]))
    opt = torch.optim.Adam(net.parameters(), lr=float(cfg["lr"]))
    for _ in range(int(cfg["train_steps"])):
        idx = torch.randint(0, len(sx), (int(cfg["batch"]),), generator=gen)
        x0, x1 = sx[idx], target[idx]
        t = torch.rand((len(idx), 1), generator=gen)
        pred = net(torch.cat([(1 - t) * x0 + t * x1, t], dim=1))
        loss = ((pred - (x1 - x0)) ** 2).sum(dim=1).mean()
        _step(opt, net, loss, float(cfg["clip"]))
    return net


def _euclid_transport(net: Any, x: Any, steps: int) -> Any:
    import torch

    with torch.no_grad():
        for k in range(steps):
            t = torch.full((len(x), 1), k / steps)
            x = x + net(torch.cat([x, t], dim=1)) / steps
    return x


def _hyp_velocity(net: Any, x: Any, t: Any) -> Any:
    import torch

    # the network reads the point in the origin's chart (bounded inputs) and proposes an
    # ambient vector, projected onto the tangent space at x
    return project(x, net(torch.cat([logmap0(x), t], dim=1)))


def _train_hfm(sx: Any, target: Any, cfg: Mapping[str, Any], gen: Any) -> Any:
    import torch

    d1 = sx.shape[1]
    net = _mlp(d1, d1, int(cfg["width"]))
    opt = torch.optim.Adam(net.parameters(), lr=float(cfg["lr"]))
    steps, weight = int(cfg["steps"]), float(cfg["step_weight"])
    for _ in range(int(cfg["train_steps"])):
        idx = torch.randint(0, len(sx), (int(cfg["batch"]),), generator=gen)
        x0, x1 = sx[idx], target[idx]
        t = torch.rand((len(idx), 1), generator=gen)
        xt, ut = geodesic(x0, x1, t)
        diff = project(xt, _hyp_velocity(net, xt, t) - ut)
        loss = minkowski(diff, diff).clamp_min(0).mean()  # squared Riemannian norm
        if weight > 0:  # step-wise supervision along the unrolled integration
            x, path = x0, 0.0
            for k in range(steps):
                tk = torch.full((len(idx), 1), k / steps)
                x = expmap(x, _hyp_velocity(net, x, tk) / steps)
                goal, _ = geodesic(x0, x1, torch.full((len(idx), 1), (k + 1) / steps))
                path = path + distance(x, goal).pow(2).mean()
            loss = loss + weight * path / steps
        _step(opt, net, loss, float(cfg["clip"]))
    return net


def _hfm_transport(net: Any, x: Any, roots: Any, steps: int, stop: bool) -> tuple[Any, Any]:
    """Integrate with diameter-based stopping; returns final points and steps taken."""
    import torch

    rr = distance(roots[:, None, :], roots[None, :, :])
    rr = rr + torch.eye(len(roots)) * 1e9
    radius = 0.5 * rr.min()
    moving = torch.ones(len(x), dtype=torch.bool)
    taken = torch.zeros(len(x))
    with torch.no_grad():
        for k in range(steps):
            if stop:
                near = distance(x[:, None, :], roots[None, :, :]).min(dim=1).values
                moving &= near > radius
            if not moving.any():
                break
            t = torch.full((len(x), 1), k / steps)
            step = expmap(x, _hyp_velocity(net, x, t) / steps)
            x = torch.where(moving[:, None], step, x)
            taken += moving.float()
    return x, taken


def _scale_to(v: Any, radius: float) -> Any:
    return v * (radius / v.norm(dim=1).mean().clamp_min(EPS))


def run(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int,
        mode: str) -> dict[str, Any]:
    """Fit ``mode`` (``euclid``, ``hfm``, ``proto``) on the support set; predict queries."""
    import torch

    cfg = {**DEFAULTS, **{k: v for k, v in config.items() if k in DEFAULTS}}
    sx = np.asarray(inputs["support_x"], dtype=float)
    sy = np.asarray(inputs["support_y"], dtype=np.int64)
    qx = np.asarray(inputs["query_x"], dtype=float)
    roots = np.asarray(inputs["roots"], dtype=float)
    steps = int(cfg["steps"])
    if mode == "proto":
        proto = np.stack([sx[sy == c].mean(axis=0) for c in range(len(roots))])
        dist = ((qx[:, None, :] - proto[None, :, :]) ** 2).sum(axis=2)
        return {"pred": dist.argmin(axis=1).tolist(), "nfe": 0.0, "steps_taken": 0.0}
    with _one_thread():
        torch.manual_seed(seed)
        gen = torch.Generator().manual_seed(seed)
        s = torch.as_tensor(sx, dtype=torch.float32)
        q = torch.as_tensor(qx, dtype=torch.float32)
        r = torch.as_tensor(roots, dtype=torch.float32)
        yt = torch.as_tensor(sy)
        if mode == "euclid":
            net = _train_euclid(s, r[yt], cfg, gen)
            end = _euclid_transport(net, q, steps)
            pred = ((end[:, None, :] - r[None, :, :]) ** 2).sum(dim=2).argmin(dim=1)
            taken = float(steps)
        elif mode == "hfm":
            scale = s.norm(dim=1).mean()
            leaves = expmap0(s / scale * float(cfg["leaf_radius"]))
            queries = expmap0(q / scale * float(cfg["leaf_radius"]))
            hroots = expmap0(_scale_to(r, float(cfg["root_radius"])))
            net = _train_hfm(leaves, hroots[yt], cfg, gen)
            end, moved = _hfm_transport(net, queries, hroots, steps, bool(cfg["stop"]))
            pred = distance(end[:, None, :], hroots[None, :, :]).argmin(dim=1)
            taken = float(moved.mean())
        else:
            raise ValueError(f"unknown mode {mode!r}")
    return {"pred": pred.tolist(), "nfe": float(steps), "steps_taken": taken}
