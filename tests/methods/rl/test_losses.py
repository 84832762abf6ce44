"""GRPO and PMD-mean losses on hand-computed values."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from methods.rl import losses as L  # noqa: E402


def test_advantages() -> None:
    r = torch.tensor([[1.0, 0.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0]])
    loo = L.loo_advantages(r)
    assert loo[0].tolist() == pytest.approx([1 - 1 / 3, -2 / 3, -2 / 3, 1 - 1 / 3])
    assert loo[1].tolist() == [0.0] * 4
    g = L.grpo_advantages(r, eps=0.0 + 1e-12)
    assert g[0].tolist() == pytest.approx([1.0, -1.0, -1.0, 1.0])
    assert g[1].abs().max() == 0
    with pytest.raises(ValueError, match="K >= 2"):
        L.loo_advantages(torch.tensor([[1.0], [0.0]]))


def test_pmd_mean_loss_value_and_gradient() -> None:
    """tau/2 (A/tau - sum log-ratio)^2 per sequence; its gradient at ratio 1 is -A."""
    rewards = torch.tensor([[1.0, 0.0]])
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    old = torch.tensor([[-1.0, -2.0, -9.0], [-0.5, -9.0, -9.0]], dtype=torch.float64)
    logp = old.clone().requires_grad_(True)
    tau = 0.5
    out = L.pmd_mean_loss(logp, old, None, mask, rewards, tau=tau)
    # A = [1, -1]; log-ratio 0 -> each term tau/2 (A/tau)^2 = A^2 / (2 tau) = 1
    assert float(out.loss) == pytest.approx(1.0)
    out.loss.backward()
    # d/dlogp_t = -(A - tau * ratio) * mask / n_seq
    assert logp.grad[0].tolist() == pytest.approx([-0.5, -0.5, 0.0])
    assert logp.grad[1].tolist() == pytest.approx([0.5, 0.0, 0.0])
    # off-policy: a log-ratio equal to A/tau is the regression's optimum (zero loss)
    shifted = old.clone()
    shifted[0, 0] += 1 / tau
    shifted[1, 0] -= 1 / tau
    assert float(L.pmd_mean_loss(shifted, old, None, mask, rewards, tau).loss) == \
        pytest.approx(0.0, abs=1e-12)


def test_grpo_clips_the_ratio() -> None:
    rewards = torch.tensor([[1.0, 0.0]])
    mask = torch.ones(2, 1)
    old = torch.zeros(2, 1)
    # response 0 (A = +1) already 50% more likely: clipped at 1.2, no gradient
    logp = torch.tensor([[math.log(1.5)], [0.0]], requires_grad=True)
    out = L.grpo_loss(logp, old, None, mask, rewards, clip_eps=0.2)
    adv = L.grpo_advantages(rewards)[0]
    expected = -(1.2 * float(adv[0]) + 1.0 * float(adv[1])) / 2
    assert float(out.loss) == pytest.approx(expected, rel=1e-6)
    assert out.clip_frac == pytest.approx(0.5)
    out.loss.backward()
    assert logp.grad[0, 0] == 0
    assert float(logp.grad[1, 0]) == pytest.approx(-float(adv[1]) / 2, rel=1e-6)


def test_k3_kl_is_zero_at_the_reference_and_positive_elsewhere() -> None:
    logp = torch.tensor([-1.0, -2.0])
    assert L.k3_kl(logp, logp).abs().max() == 0
    assert (L.k3_kl(logp, logp + torch.tensor([0.3, -0.3])) > 0).all()
    rewards = torch.tensor([[1.0, 0.0]])
    mask = torch.ones(2, 1)
    ref = torch.zeros(2, 1)
    lp = torch.full((2, 1), -0.5)
    with_kl = L.pmd_mean_loss(lp, lp, ref, mask, rewards, tau=1.0, beta=0.1)
    without = L.pmd_mean_loss(lp, lp, ref, mask, rewards, tau=1.0, beta=0.0)
    kl = math.exp(0.5) - 0.5 - 1
    assert with_kl.kl == pytest.approx(kl)
    assert float(with_kl.loss - without.loss) == pytest.approx(0.1 * kl)
