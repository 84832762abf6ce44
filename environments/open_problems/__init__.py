"""Open mathematical problems with exact verifiers (no Inspect imports here).

Two problems from the AlphaEvolve / ThetaEvolve line of work, each a plain verifier over a
candidate solution plus an initial program that produces a valid (poor) solution:

- ``circle_packing``: 26 circles in the unit square, maximise the sum of radii.
- ``first_autocorrelation``: a non-negative step function on [-1/4, 1/4]; minimise
  max(f*f) / (integral f)^2, an upper bound on the first autocorrelation constant.

The verifiers are what a benchmark scores with; run one from the shell with
``python -m environments.open_problems.verify circle_packing FILE.json --json``.
"""

from environments.open_problems.autocorrelation import autocorrelation_bound, verify_autocorrelation
from environments.open_problems.circle_packing import verify_circle_packing
from environments.open_problems.problems import PROBLEMS, Problem, Verdict, get_problem, verify

__all__ = [
    "PROBLEMS",
    "Problem",
    "Verdict",
    "autocorrelation_bound",
    "get_problem",
    "verify",
    "verify_autocorrelation",
    "verify_circle_packing",
]
