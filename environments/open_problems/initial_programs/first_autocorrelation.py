"""Initial program: a step function f >= 0 on [-1/4, 1/4] that makes
max(f*f) / (integral f)^2 small (an upper bound on the first autocorrelation constant).

Writes solution.json: the list of step heights. Only the code between the EVOLVE-BLOCK
markers is meant to be changed. Start: a constant function (bound exactly 2), then
ITERATIONS steps of seeded hill climbing that rescale one height at a time and keep a
change only if the bound drops.
"""

import json

import numpy as np


def bound(heights):
    """2n * max(h*h) / sum(h)^2: the exact bound of the step function."""
    return 2 * len(heights) * np.convolve(heights, heights).max() / heights.sum() ** 2


# EVOLVE-BLOCK-START
N_STEPS = 50
ITERATIONS = 0
STEP_SIZE = 0.1
SEED = 0


def initial_heights():
    """A constant function."""
    return np.ones(N_STEPS)


def improve(heights, iterations, rng):
    """Hill climbing: rescale one height, keep the change if the bound drops."""
    best = bound(heights)
    for _ in range(iterations):
        i = rng.integers(len(heights))
        trial = heights.copy()
        trial[i] = max(0.0, trial[i] * (1 + rng.normal(0, STEP_SIZE)))
        value = bound(trial)
        if value < best:
            heights, best = trial, value
    return heights


def construct_function():
    """Step heights of f."""
    return improve(initial_heights(), ITERATIONS, np.random.default_rng(SEED))
# EVOLVE-BLOCK-END


def main():
    heights = construct_function()
    with open("solution.json", "w") as f:
        json.dump([float(h) for h in heights], f)
    print("bound:", bound(np.asarray(heights, dtype=float)))


if __name__ == "__main__":
    main()
