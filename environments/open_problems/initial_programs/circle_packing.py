"""Initial program: 26 circles in the unit square, maximise the sum of radii.

Writes solution.json: a list of 26 [x, y, r]. Only the code between the EVOLVE-BLOCK
markers is meant to be changed. Start: a 6x5 grid (first 26 cells), radii as large as the
walls and the neighbours allow, then ITERATIONS steps of seeded hill climbing that move one
centre at a time and keep a move only if the sum of radii grows.
"""

import json

import numpy as np

N = 26

# EVOLVE-BLOCK-START
ITERATIONS = 0
STEP_SIZE = 0.02
SEED = 0


def initial_centers():
    """The first 26 cells of a 6 x 5 grid."""
    cells = [((i + 0.5) / 6, (j + 0.5) / 5) for j in range(5) for i in range(6)]
    return np.array(cells[:N])


def max_radii(centers):
    """Radii bounded by the walls, then shrunk pair by pair until nothing overlaps."""
    radii = np.minimum.reduce(
        [centers[:, 0], centers[:, 1], 1 - centers[:, 0], 1 - centers[:, 1]]
    )
    for i in range(N):
        for j in range(i + 1, N):
            d = float(np.hypot(*(centers[i] - centers[j])))
            if radii[i] + radii[j] > d:
                scale = d / (radii[i] + radii[j])
                radii[i] *= scale
                radii[j] *= scale
    return radii


def improve(centers, iterations, rng):
    """Hill climbing: move one centre a little, keep the move if the sum of radii grows."""
    best = max_radii(centers).sum()
    for _ in range(iterations):
        i = rng.integers(N)
        trial = centers.copy()
        trial[i] = np.clip(trial[i] + rng.normal(0, STEP_SIZE, 2), 0, 1)
        score = max_radii(trial).sum()
        if score > best:
            centers, best = trial, score
    return centers


def construct_packing():
    """Centres and radii of the packing."""
    centers = improve(initial_centers(), ITERATIONS, np.random.default_rng(SEED))
    return centers, max_radii(centers)
# EVOLVE-BLOCK-END


def main():
    centers, radii = construct_packing()
    circles = [[float(x), float(y), float(r)] for (x, y), r in zip(centers, radii, strict=True)]
    with open("solution.json", "w") as f:
        json.dump(circles, f)
    print("sum of radii:", sum(r for _, _, r in circles))


if __name__ == "__main__":
    main()
