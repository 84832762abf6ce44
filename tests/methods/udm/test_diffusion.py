"""The forward process, the reverse kernel and the sampler of the tiny UDM, against exact
probabilities."""

from __future__ import annotations

import itertools

import pytest
import torch
from torch import nn

from methods.udm.diffusion import (
    alpha,
    forward_marginal,
    q_sample,
    reverse_probs,
    sample,
    time_grid,
)


def test_schedules_hit_their_end_points_and_shapes() -> None:
    tau = torch.tensor([0.0, 0.25, 0.5, 1.0])
    assert torch.allclose(alpha(tau, "linear"), torch.tensor([1.0, 0.75, 0.5, 0.0]))
    cos = alpha(tau, "cosine")
    assert cos[0] == 1.0 and cos[-1] == 0.0
    assert torch.isclose(cos[2], torch.tensor(0.5), atol=1e-6)
    assert torch.all(cos[:-1] >= cos[1:])
    with pytest.raises(ValueError, match="schedule"):
        alpha(tau, "sqrt")
    grid = time_grid(4)
    assert grid.tolist() == [1.0, 0.75, 0.5, 0.25, 0.0]


@pytest.mark.parametrize("schedule", ["linear", "cosine"])
@pytest.mark.parametrize("tau", [0.0, 0.3, 0.7, 1.0])
def test_forward_marginals_match_the_schedule(schedule: str, tau: float) -> None:
    """P(x_tau = x_0) = alpha + (1 - alpha)/V and every other token (1 - alpha)/V, within
    4 standard errors over 60,000 tokens."""
    vocab, n = 5, 60_000
    gen = torch.Generator().manual_seed(1)
    x0 = torch.randint(0, vocab, (n // 4, 4), generator=gen)
    a_val = alpha(torch.tensor([tau]), schedule)
    xt = q_sample(x0, a_val.expand(x0.shape[0]), vocab, gen)
    a = float(a_val)
    p_same = a + (1 - a) / vocab
    same = (xt == x0).float().mean().item()
    assert abs(same - p_same) <= 4 * (p_same * (1 - p_same) / n) ** 0.5 + 1e-9
    shifted = ((xt - x0) % vocab == 2).float().mean().item()  # one particular other token
    p_other = (1 - a) / vocab
    assert abs(shifted - p_other) <= 4 * (max(p_other * (1 - p_other), 1e-12) / n) ** 0.5 + 1e-9
    exact = forward_marginal(x0[:3], a_val.expand(3), vocab)
    assert torch.allclose(exact.sum(-1), torch.ones(3, 4))
    assert torch.allclose(exact.gather(-1, x0[:3].unsqueeze(-1)).squeeze(-1),
                          torch.full((3, 4), p_same))


def _kernel(a: float, vocab: int) -> torch.Tensor:
    return a * torch.eye(vocab) + (1 - a) / vocab


def test_marginals_compose_over_time() -> None:
    """q(x_t | x_0) = q(x_t | x_s) q(x_s | x_0) with the step kernel alpha_t / alpha_s."""
    vocab, a_s, a_t = 4, 0.8, 0.3
    assert torch.allclose(_kernel(a_s, vocab) @ _kernel(a_t / a_s, vocab), _kernel(a_t, vocab))


def test_reverse_kernel_is_the_exact_posterior_given_x0() -> None:
    """With all mass on one clean token u, p(x_s | x_t) is Bayes' q(x_s | x_t, x_0 = u)."""
    vocab, a_s, a_t = 3, 0.7, 0.2
    step, prior = _kernel(a_t / a_s, vocab), _kernel(a_s, vocab)
    for u, w in itertools.product(range(vocab), range(vocab)):
        p0 = nn.functional.one_hot(torch.tensor([[u]]), vocab).float()
        got = reverse_probs(p0, torch.tensor([[w]]), torch.tensor([a_t]), torch.tensor([a_s]))
        bayes = prior[u] * step[:, w]
        assert torch.allclose(got[0, 0], bayes / bayes.sum(), atol=1e-6)


def test_reverse_kernel_at_the_last_step_samples_the_prediction() -> None:
    p0 = torch.softmax(torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(0)), -1)
    xt = torch.tensor([[0, 1, 2], [3, 3, 0]])
    got = reverse_probs(p0, xt, torch.tensor([0.4, 0.4]), torch.tensor([1.0, 1.0]))
    assert torch.allclose(got, p0, atol=1e-6)


class _ExactPosterior(nn.Module):
    """The true p(x_0 | x_t) of a one-position data distribution, as logits."""

    def __init__(self, pi: torch.Tensor) -> None:
        super().__init__()
        self.pi, self.vocab, self.length = pi, pi.shape[0], 1

    def forward(self, xt: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        like = forward_marginal(torch.arange(self.vocab), a[:1].reshape(1), self.vocab)
        # like[u, w] = q(x_t = w | x_0 = u); posterior over u given the observed w
        post = self.pi[None, :] * like[:, xt[:, 0]].T
        return torch.log(post / post.sum(-1, keepdim=True)).unsqueeze(1)


def test_sampler_with_the_exact_denoiser_reproduces_the_data() -> None:
    """One position: the reverse chain with the true posterior samples the data law."""
    pi = torch.tensor([0.6, 0.3, 0.1])
    n = 20_000
    x = sample(_ExactPosterior(pi), n, 6, torch.Generator().manual_seed(3)).final  # type: ignore[arg-type]
    freq = torch.bincount(x[:, 0], minlength=3).float() / n
    assert torch.all((freq - pi).abs() <= 4 * (pi * (1 - pi) / n).sqrt())
