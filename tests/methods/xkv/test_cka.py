"""Linear CKA: 1 for a layer with itself, invariant to orthogonal transforms and scaling,
below 1 for unrelated matrices; the probe's JSON is a symmetric layer-by-layer matrix."""

from __future__ import annotations

import importlib.util
from types import SimpleNamespace
from typing import Any

import pytest

HAVE_TORCH = all(importlib.util.find_spec(m) for m in ("torch", "transformers"))
pytestmark = pytest.mark.skipif(not HAVE_TORCH, reason="needs torch + transformers")


def _orthogonal(n: int, seed: int) -> Any:
    import torch

    q, _ = torch.linalg.qr(torch.randn(n, n, generator=torch.Generator().manual_seed(seed),
                                       dtype=torch.float64))
    return q


def test_self_cka_is_one_and_orthogonal_invariant() -> None:
    import torch

    from methods.xkv.cka import linear_cka

    g = torch.Generator().manual_seed(0)
    x = torch.randn(50, 12, generator=g, dtype=torch.float64)
    y = torch.randn(50, 7, generator=g, dtype=torch.float64) + x[:, :7] * 0.5
    assert linear_cka(x, x) == pytest.approx(1.0, abs=1e-12)
    assert linear_cka(x, x @ _orthogonal(12, 1)) == pytest.approx(1.0, abs=1e-12)
    base = linear_cka(x, y)
    assert 0.0 < base < 1.0
    rotated = linear_cka(x @ _orthogonal(12, 2), 3.0 * y @ _orthogonal(7, 3))
    assert rotated == pytest.approx(base, abs=1e-12)
    assert linear_cka(x, y) == pytest.approx(linear_cka(y, x), abs=1e-12)


def test_unrelated_matrices_score_low_and_bad_input_is_an_error() -> None:
    import torch

    from methods.xkv.cka import linear_cka

    g = torch.Generator().manual_seed(4)
    a, b = torch.randn(400, 4, generator=g), torch.randn(400, 4, generator=g)
    assert linear_cka(a, b) < 0.1
    with pytest.raises(ValueError, match="same rows"):
        linear_cka(a, b[:10])
    with pytest.raises(ValueError, match="constant"):
        linear_cka(torch.ones(5, 3), a[:5])


def test_probe_matrix_on_tiny_model(tiny: Any) -> None:
    import torch

    from methods.xkv.cka import probe

    lm = SimpleNamespace(model=tiny, encode=lambda text: torch.tensor([[3 + (ord(c) % 80)
                                                                        for c in text]]))
    out = probe(lm, "a small prompt with some letters in it", "tiny")
    n = tiny.config.num_hidden_layers
    assert out["layers"] == n and out["tokens"] == len("a small prompt with some letters in it")
    for kind in ("keys_pre_rope", "values"):
        m = out[kind]
        assert len(m) == n and all(len(r) == n for r in m)
        assert all(m[i][i] == 1.0 for i in range(n))
        assert all(m[i][j] == m[j][i] and 0.0 <= m[i][j] <= 1.0 + 1e-9
                   for i in range(n) for j in range(n))
        assert -1.0 <= out[f"{kind}_adjacent_token_cosine_mean"] <= 1.0
