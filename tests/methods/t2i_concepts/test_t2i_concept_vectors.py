"""The joint-attention generator and where each method injects its concept vector."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from methods.t2i_concepts.concepts import _model  # noqa: E402


def _net() -> torch.nn.Module:
    torch.manual_seed(0)
    return _model(16, 4, 3, 8)


def test_zero_vectors_change_nothing_and_shapes_hold() -> None:
    net = _net()
    x, t = torch.randn(5, 3, 8, 8), torch.rand(5)
    cap = torch.tensor([[0, 2, 2]] * 5)
    with torch.no_grad():
        plain = net(x, t, cap)
        assert plain.shape == (5, 3, 8, 8)
        assert torch.allclose(net(x, t, cap, heads_vec=torch.zeros(3, 16)), plain)
        assert torch.allclose(net(x, t, cap, bottleneck=torch.zeros(16)), plain)


def test_the_two_injections_act_differently() -> None:
    """A head vector reaches the caption stream too (joint attention), a bottleneck vector
    only the image stream after the middle block: the same-sized push moves the output
    differently."""
    net = _net()
    x, t = torch.randn(4, 3, 8, 8), torch.rand(4)
    cap = torch.tensor([[1, 2, 2]] * 4)
    vec = torch.randn(16)
    with torch.no_grad():
        base = net(x, t, cap)
        heads = net(x, t, cap, heads_vec=torch.stack([vec, vec, vec])) - base
        neck = net(x, t, cap, bottleneck=vec) - base
    assert heads.abs().max() > 1e-3 and neck.abs().max() > 1e-3
    assert not torch.allclose(heads, neck, atol=1e-3)
