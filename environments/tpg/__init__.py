"""A nonstationary Markov system under a Bernoulli-randomised A/B test (TPG paper's setting).

No Inspect imports here: the simulator, its exact global average treatment effect and the
exact expectation of the truncated policy-gradient estimator.
"""

from environments.tpg.system import (
    MarkovSystem,
    Trajectory,
    exact_gate,
    expected_tpg,
    make_system,
    simulate,
)

__all__ = ["MarkovSystem", "Trajectory", "exact_gate", "expected_tpg", "make_system",
           "simulate"]
