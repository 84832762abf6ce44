import numpy as np
import pytest
from smooth import smooth


def _naive(g, kernel):
    rows, cols = g.shape
    out = np.empty_like(g)
    for i in range(rows):
        for j in range(cols):
            def at(a, b):
                return g[min(max(a, 0), rows - 1), min(max(b, 0), cols - 1)]
            if kernel == "cross":
                out[i, j] = (4 * at(i, j) + at(i - 1, j) + at(i + 1, j) + at(i, j - 1)
                             + at(i, j + 1)) / 8
            else:
                out[i, j] = sum(at(i + a, j + b) for a in (-1, 0, 1) for b in (-1, 0, 1)) / 9
    return out


@pytest.mark.parametrize("kernel", ["cross", "box"])
def test_matches_naive_stencil(kernel):
    g = np.random.default_rng(2).random((13, 9))
    assert np.allclose(smooth(g, 2, kernel), _naive(_naive(g, kernel), kernel))


@pytest.mark.parametrize("kernel", ["cross", "box"])
def test_large_grid_matches_one_vectorised_step_at_a_time(kernel):
    g = np.random.default_rng(3).random((701, 653))  # above the parallel threshold
    ref = g
    for _ in range(2):
        P = np.pad(ref, 1, mode="edge")
        if kernel == "cross":
            ref = (4 * P[1:-1, 1:-1] + P[:-2, 1:-1] + P[2:, 1:-1] + P[1:-1, :-2]
                   + P[1:-1, 2:]) / 8
        else:
            ref = sum(P[1 + a:P.shape[0] - 1 + a, 1 + b:P.shape[1] - 1 + b]
                      for a in (-1, 0, 1) for b in (-1, 0, 1)) / 9
    assert np.allclose(smooth(g, 2, kernel), ref)


def test_constant_grid_is_a_fixed_point_and_bad_kernel_raises():
    g = np.full((64, 33), 2.5)
    assert np.allclose(smooth(g, 3, "box"), 2.5)
    with pytest.raises(ValueError):
        smooth(g, 1, "gauss")
