import math

import numpy as np
import pytest
from actfn import KINDS, apply


def _ref(v, kind):
    if kind == "gelu":
        return 0.5 * v * (1 + math.tanh(0.7978845608028654 * (v + 0.044715 * v ** 3)))
    sp = math.log1p(math.exp(-abs(v))) + max(v, 0.0)
    if kind == "softplus":
        return sp
    if kind == "swish":
        return v / (1 + math.exp(-v))
    return v * math.tanh(sp)


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("n", [7, 5000, 300_001])
def test_matches_scalar_reference(kind, n):
    x = np.linspace(-6, 6, n)
    out = apply(x, kind)
    assert out.shape == x.shape and out.dtype == np.float64
    idx = np.arange(0, n, max(1, n // 50))
    assert np.allclose(out[idx], [_ref(float(v), kind) for v in x[idx]], rtol=1e-12, atol=1e-12)


def test_shape_kept_for_2d_input():
    x = np.arange(6000, dtype=float).reshape(60, 100) / 1000 - 3
    assert np.array_equal(apply(x, "gelu"), apply(x.ravel(), "gelu").reshape(60, 100))
