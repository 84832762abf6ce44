"""HFM (path-decoupled hyperbolic flow matching), Euclidean flow matching and nearest
prototypes, as plain methods of the ``fewshot_transport`` family.

Registering imports no torch (``harness list`` stays light); :mod:`methods.hfm.flows` loads
on first use. Inputs: ``support_x`` ``(n, d)``, ``support_y`` (class indices), ``query_x``
``(q, d)``, ``roots`` ``(C, d)`` (the classes' text roots in the shared space). Config: any
key of :data:`methods.hfm.flows.DEFAULTS`. Outputs: ``pred`` (a class per query), ``nfe``
(velocity evaluations allowed per query) and ``steps_taken`` (mean steps actually taken).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.plugins.plain_method import plain_method

__all__ = ["FAMILY", "euclid_fm", "hfm", "proto"]

FAMILY = "fewshot_transport"


def _run(mode: str, inputs: Mapping[str, Any], config: Mapping[str, Any],
         seed: int) -> dict[str, Any]:
    from methods.hfm.flows import run

    return run(inputs, config, seed, mode)


@plain_method("hfm", family=FAMILY, extra="cpu")
def hfm(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """HFM: Lorentz-model flow matching with anchored roots, step-wise geodesic supervision
    and diameter-based stopping."""
    return _run("hfm", inputs, config, seed)


@plain_method("euclid-fm", family=FAMILY, role="baseline", extra="cpu")
def euclid_fm(inputs: Mapping[str, Any], config: Mapping[str, Any],
              seed: int) -> dict[str, Any]:
    """Euclidean flow matching: straight paths from features to roots, the same network."""
    return _run("euclid", inputs, config, seed)


@plain_method("proto", family=FAMILY, role="reference")
def proto(inputs: Mapping[str, Any], config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """Nearest support-class mean (no transport): the few-shot yardstick."""
    return _run("proto", inputs, config, seed)
