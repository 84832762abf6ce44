"""HFM's Lorentz geometry is right (points on the hyperboloid, geodesics end where they
should, exp/log inverse), the diameter-based stop halts a query that reached its root's
neighbourhood, and on a fixed episode only HFM stops early (fails if HFM is replaced by the
Euclidean flow, which always takes every step)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from methods.hfm import flows as F


def test_lorentz_maps_and_geodesics() -> None:
    g = torch.Generator().manual_seed(0)
    v = torch.randn((6, 4), generator=g)
    x = F.expmap0(v)
    assert torch.allclose(F.minkowski(x, x), -torch.ones(6, 1), atol=1e-4)
    assert torch.allclose(F.logmap0(x), v, atol=1e-4)
    y = F.expmap0(0.3 * torch.randn((6, 4), generator=g))
    start, _ = F.geodesic(x, y, torch.zeros(6, 1))
    end, vel = F.geodesic(x, y, torch.ones(6, 1))
    assert torch.allclose(start, x, atol=1e-3) and torch.allclose(end, y, atol=1e-2)
    # the velocity is tangent and its speed is the distance (unit-time geodesic)
    assert torch.allclose(F.minkowski(end, vel), torch.zeros(6, 1), atol=1e-2)
    assert torch.allclose(F.minkowski(vel, vel).sqrt().squeeze(-1), F.distance(x, y), rtol=1e-2)
    assert torch.allclose(F.distance(x, y), F.distance(y, x))


class _ToRoot(torch.nn.Module):
    """A velocity field that points every point along its geodesic to root 0."""

    def __init__(self, root: torch.Tensor) -> None:
        super().__init__()
        self.root = root

    def forward(self, inp: torch.Tensor) -> torch.Tensor:
        x = F.expmap0(inp[:, :-1])
        t = inp[:, -1:]
        direction = self.root + F.minkowski(x, self.root) * x
        unit = direction / F.minkowski(direction, direction).clamp_min(1e-12).sqrt()
        return F.distance(x, self.root).unsqueeze(-1) / (1 - t).clamp_min(1e-3) * unit


def test_diameter_stop_halts_near_a_root() -> None:
    roots = F.expmap0(torch.tensor([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]]))
    net = _ToRoot(roots[0])
    start = F.expmap0(torch.tensor([[2.0, 2.0], [3.0, -1.0]]))
    end, taken = F._hfm_transport(net, start, roots, 8, stop=True)
    _, all_steps = F._hfm_transport(net, start, roots, 8, stop=False)
    assert torch.all(taken < 8) and torch.all(all_steps == 8)
    radius = 0.5 * F.distance(roots[0], roots[1:]).min()
    assert torch.all(F.distance(end, roots[0].expand_as(end)) <= radius + 1e-4)


@pytest.mark.slow
def test_only_hfm_stops_early_on_a_fixed_episode() -> None:
    rng = np.random.default_rng(0)
    roots = rng.standard_normal((5, 6))
    sy = np.repeat(np.arange(5), 4)
    sx = roots[sy] + 0.6 * rng.standard_normal((20, 6))
    qy = np.repeat(np.arange(5), 20)
    qx = roots[qy] + 0.6 * rng.standard_normal((100, 6))
    inputs = {"support_x": sx, "support_y": sy, "query_x": qx, "roots": roots}
    cfg = {"train_steps": 300}
    hfm, euclid = F.run(inputs, cfg, 0, "hfm"), F.run(inputs, cfg, 0, "euclid")
    assert euclid["steps_taken"] == euclid["nfe"] == 8.0
    assert hfm["steps_taken"] < hfm["nfe"]
    assert (np.asarray(hfm["pred"]) == qy).mean() > 0.6
