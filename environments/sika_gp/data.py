"""Noisy samples of a fixed function with two length scales on [0, 1].

``f(x) = sin(12 x) + 0.5 x sin(37 x) + exp(-80 (x - 0.3)^2)``: a slow wave, a faster one
whose amplitude grows with ``x`` and a bump, so a kernel must resolve scales from about
0.03 to 0.5. Training inputs are uniform; test points are uniform too, with noisy targets
(the NLL is of noisy observations) and the noise-free latent for the RMSE.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]


def latent(x: Array) -> Array:
    return np.sin(12 * x) + 0.5 * x * np.sin(37 * x) + np.exp(-80 * (x - 0.3) ** 2)


@dataclass(frozen=True)
class Regression:
    x: Array
    y: Array
    x_test: Array
    y_test: Array
    f_test: Array
    noise_sd: float


def make_regression(n: int = 2000, n_test: int = 500, noise_sd: float = 0.2,
                    seed: int = 0) -> Regression:
    rng = np.random.default_rng(seed)
    x = rng.random(n)
    x_test = rng.random(n_test)
    f_test = latent(x_test)
    return Regression(x=x, y=latent(x) + rng.normal(0, noise_sd, n), x_test=x_test,
                      y_test=f_test + rng.normal(0, noise_sd, n_test), f_test=f_test,
                      noise_sd=noise_sd)
