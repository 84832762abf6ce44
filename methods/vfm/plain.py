"""VFM (noise adapter trained jointly with the flow map), the adapter on a frozen map, and a
guided multi-step rectified-flow sampler, as plain methods of the ``vfm_posterior`` family.

Registering imports no torch (``harness list`` stays light); :mod:`methods.vfm.flows` loads
on first use. Inputs: ``x_train`` (prior draws), ``a`` (the operator, ``(m, 2)``),
``sigma`` (noise level), ``y`` (observations, ``(n_obs, m)``). Config: any key of
:data:`methods.vfm.flows.DEFAULTS`. Outputs: ``samples`` ``(n_obs, n_samples, 2)``,
``nfe`` (network evaluations per posterior draw at sampling time) and, for the adapters,
``map_prior_rmse`` (how far the map drifted from the teacher's ODE on prior noise).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.plugins.plain_method import plain_method

__all__ = ["FAMILY", "guided", "vfm", "vfm_frozen"]

FAMILY = "vfm_posterior"


def _run(mode: str, inputs: Mapping[str, Any], config: Mapping[str, Any],
         seed: int) -> dict[str, Any]:
    from methods.vfm.flows import run

    return run(inputs, config, seed, mode)


@plain_method("vfm", family=FAMILY, extra="cpu")
def vfm(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """VFM: a Gaussian noise adapter and the flow map trained jointly; one step a draw."""
    return _run("vfm", inputs, config, seed)


@plain_method("vfm-frozen", family=FAMILY, role="reference", extra="cpu")
def vfm_frozen(inputs: Mapping[str, Any], config: Mapping[str, Any],
               seed: int) -> dict[str, Any]:
    """The VFM adapter on the distilled flow map held fixed (the paper's ablation)."""
    return _run("vfm-frozen", inputs, config, seed)


@plain_method("guided", family=FAMILY, role="baseline", extra="cpu")
def guided(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """PiGDM-guided Euler sampling of the rectified flow (``guided_steps`` evaluations)."""
    return _run("guided", inputs, config, seed)
