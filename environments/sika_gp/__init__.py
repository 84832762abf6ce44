"""Seeded synthetic 1-D regression for scalable-GP checks (SIKA-GP). No Inspect imports."""

from environments.sika_gp.data import Regression, latent, make_regression

__all__ = ["Regression", "latent", "make_regression"]
