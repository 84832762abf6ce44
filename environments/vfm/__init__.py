"""A 2-D Gaussian-mixture prior under a noisy linear measurement, with its exact posterior
(the Variational Flow Maps method task's world). No Inspect imports."""

from environments.vfm.mixture import (
    InverseProblem,
    MixturePrior,
    Posterior,
    make_inverse_problem,
    make_prior,
    posterior,
    sample_posterior,
)

__all__ = ["InverseProblem", "MixturePrior", "Posterior", "make_inverse_problem",
           "make_prior", "posterior", "sample_posterior"]
