"""Seeded federations of private domains with a public proxy pool (MetaMoE's setting).
No Inspect imports."""

from environments.metamoe.federation import Federation, make_federation

__all__ = ["Federation", "make_federation"]
