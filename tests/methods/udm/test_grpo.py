"""The GRPO pieces: advantages, the clipped surrogate, and the forward-process reconstruction
estimator checked for unbiasedness (value and gradient) against exact enumeration."""

from __future__ import annotations

import itertools

import pytest
import torch

from methods.udm.diffusion import Denoiser, forward_marginal, sample
from methods.udm.grpo import (
    clipped_surrogate,
    group_advantages,
    naive_batch,
    naive_logprobs,
    reconstruction_logprob,
    udm_batch,
    udm_logprobs,
)

VOCAB, LENGTH = 3, 2
X0 = torch.tensor([[0, 2], [1, 1]])
ALPHAS = torch.tensor([0.0, 0.4, 0.8])


def _model() -> Denoiser:
    torch.manual_seed(0)
    return Denoiser(VOCAB, LENGTH, hidden=8, depth=2)


def _exact(model: Denoiser) -> torch.Tensor:
    """(1/K) sum_k sum_{x~} q(x~ | x_0, alpha_k) log p_theta(x_0 | x~) per sample, by
    enumerating all V^L noisy strings."""
    states = torch.tensor(list(itertools.product(range(VOCAB), repeat=LENGTH)))
    out = []
    for x0 in X0:
        terms = []
        for a in ALPHAS:
            q = forward_marginal(x0, a.reshape(1), VOCAB)            # L x V
            weight = q[torch.arange(LENGTH), states].prod(-1)         # over the V^L states
            batch = {"x0": x0.expand(len(states), -1), "xt": states,
                     "a_t": a.expand(len(states))}
            terms.append((weight * udm_logprobs(model, batch)).sum())
        out.append(torch.stack(terms).mean())
    return torch.stack(out)


def test_reconstruction_estimate_is_unbiased_for_the_exact_value() -> None:
    model = _model()
    m = 6000
    est = reconstruction_logprob(model, X0.repeat(m, 1), ALPHAS,
                                 torch.Generator().manual_seed(5)).detach().view(m, 2)
    exact = _exact(model).detach()
    se = est.std(0) / m ** 0.5
    assert torch.all((est.mean(0) - exact).abs() <= 4 * se)


def test_a_wrong_noise_level_is_detected_as_bias() -> None:
    """The same check fails for an estimator that re-noises at the wrong level, so the
    unbiasedness test can fail."""
    model = _model()
    m = 6000
    est = reconstruction_logprob(model, X0.repeat(m, 1), (ALPHAS + 0.15).clamp(max=1.0),
                                 torch.Generator().manual_seed(5)).detach().view(m, 2)
    se = est.std(0) / m ** 0.5
    assert torch.any((est.mean(0) - _exact(model).detach()).abs() > 6 * se)


def test_reconstruction_gradient_is_unbiased() -> None:
    """Mean of per-chunk Monte Carlo gradients vs the exact gradient, every parameter."""
    model = _model()
    params = list(model.parameters())
    exact = torch.cat([g.flatten() for g in torch.autograd.grad(_exact(model).sum(), params)])
    gen = torch.Generator().manual_seed(11)
    chunks = []
    for _ in range(40):
        est = reconstruction_logprob(model, X0.repeat(300, 1), ALPHAS, gen).view(300, 2)
        grads = torch.autograd.grad(est.mean(0).sum(), params)
        chunks.append(torch.cat([g.flatten() for g in grads]))
    g = torch.stack(chunks)
    se = g.std(0) / len(chunks) ** 0.5
    z = (g.mean(0) - exact) / se.clamp_min(1e-9)
    live = se > 1e-7
    assert live.sum() > 50
    assert float(z[live].abs().max()) < 5.5
    assert float((z[live] ** 2).mean()) < 2.0


def test_group_advantages() -> None:
    adv = group_advantages(torch.tensor([0.0, 0.5, 1.0, 0.5]))
    assert abs(float(adv.mean())) < 1e-6
    assert abs(float(adv.std(unbiased=False)) - 1.0) < 1e-4
    assert torch.equal(group_advantages(torch.full((5,), 0.3)), torch.zeros(5))


def test_clipped_surrogate_on_policy_is_minus_mean_advantage() -> None:
    logp = torch.tensor([-1.0, -2.0, -0.5])
    adv = torch.tensor([1.0, -1.0, 2.0])
    assert torch.isclose(clipped_surrogate(logp, logp, adv, 0.2), -adv.mean())
    # a ratio of e^1 on a positive advantage is clipped at 1.2
    loss = clipped_surrogate(torch.tensor([0.0]), torch.tensor([-1.0]), torch.tensor([1.0]), 0.2)
    assert torch.isclose(loss, torch.tensor(-1.2))


@pytest.mark.parametrize("which", ["naive", "udm"])
def test_batches_hold_the_rollout_policy_log_probs(which: str) -> None:
    """``logp_old`` is the current policy's log-probability of the recorded actions, so
    the first update's ratio is exactly 1; shapes are B x steps (K) rows."""
    model = _model()
    gen = torch.Generator().manual_seed(2)
    rollout = sample(model, 4, 5, gen)
    adv = torch.tensor([1.0, -1.0, 0.5, -0.5])
    if which == "naive":
        batch = naive_batch(model, rollout, adv)
        again = naive_logprobs(model, batch)
    else:
        batch = udm_batch(model, rollout.final, rollout.alphas[:-1], adv, gen)
        again = udm_logprobs(model, batch)
    assert batch["logp_old"].shape == (20,) and batch["adv"].shape == (20,)
    assert torch.allclose(again, batch["logp_old"])
    assert torch.all(batch["logp_old"] <= 0)
