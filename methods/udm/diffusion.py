"""A tiny uniform discrete diffusion model (UDM) over fixed-length token strings.

Forward process (continuous time ``tau`` in [0, 1], schedule ``alpha(tau)`` falling from 1 to
0): each token is independently kept with probability ``alpha`` and otherwise replaced by a
token drawn uniformly from the vocabulary (which may be the same token), so

    q(x_tau = w | x_0 = u) = alpha * [w == u] + (1 - alpha) / V

and from ``s < t`` to ``t`` the same form holds with ``alpha_t / alpha_s``. At ``tau = 1`` the
string is uniform noise. Why uniform and not masking: UDM-GRPO's subject is the uniform
kernel, where every position stays a real token and can be revised at every step.

Denoiser: an MLP from the one-hot noisy string and time features to per-position logits of
the clean token, ``p_theta(x_0 | x_tau)`` (the x0-parameterisation; pretraining is its
cross-entropy on forward-noised corpus strings, :mod:`methods.udm.train`).

Reverse step ``t -> s`` (per position, factorised): the exact posterior of the forward
process mixed over the predicted clean token,

    p(x_s = v | x_t) = sum_u p_theta(u | x_t) q(x_t | x_s = v) q(x_s = v | u) / q(x_t | u)

which is the true reverse marginal per position whenever ``p_theta`` is the true per-position
posterior of ``x_0``. The sampler runs ``steps`` such steps on an even grid from 1 to 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

__all__ = ["Denoiser", "Rollout", "alpha", "forward_marginal", "q_sample", "reverse_probs",
           "sample", "time_grid"]

SCHEDULES = ("linear", "cosine")


def alpha(tau: torch.Tensor, schedule: str = "linear") -> torch.Tensor:
    """Probability that a token is still clean at time ``tau``: ``1 - tau`` (linear) or
    ``cos(pi tau / 2)^2`` (cosine); exactly 0 at ``tau = 1`` and 1 at ``tau = 0``."""
    tau = tau.clamp(0.0, 1.0)
    if schedule == "linear":
        a = 1.0 - tau
    elif schedule == "cosine":
        a = torch.cos(0.5 * math.pi * tau) ** 2
    else:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
    return torch.where(tau >= 1.0, torch.zeros_like(a), a)


def time_grid(steps: int) -> torch.Tensor:
    """``steps + 1`` times from 1 (noise) down to 0 (clean), evenly spaced."""
    if steps < 1:
        raise ValueError(f"steps must be at least 1, got {steps}")
    return torch.linspace(1.0, 0.0, steps + 1, dtype=torch.float64).float()


def forward_marginal(x0: torch.Tensor, a: torch.Tensor, vocab: int) -> torch.Tensor:
    """``q(x_tau | x_0)`` per position as probabilities, shape ``x0.shape + (V,)``; ``a``
    broadcasts over the leading (batch) dimension."""
    a = a.reshape(a.shape + (1,) * (x0.dim() + 1 - a.dim()))
    onehot = nn.functional.one_hot(x0, vocab).float()
    return a * onehot + (1.0 - a) / vocab


def q_sample(x0: torch.Tensor, a: torch.Tensor, vocab: int,
             generator: torch.Generator) -> torch.Tensor:
    """Draw ``x_tau ~ q(. | x_0)``: keep each token with probability ``a`` (per row), else a
    uniform token."""
    a = a.reshape(a.shape + (1,) * (x0.dim() - a.dim()))
    keep = torch.rand(x0.shape, generator=generator) < a
    noise = torch.randint(0, vocab, x0.shape, generator=generator)
    return torch.where(keep, x0, noise)


def reverse_probs(p0: torch.Tensor, xt: torch.Tensor, a_t: torch.Tensor,
                  a_s: torch.Tensor) -> torch.Tensor:
    """``p(x_s | x_t)`` per position (``B x L x V``) from predicted clean-token
    probabilities ``p0`` (``B x L x V``), for times with ``a_s >= a_t`` (``B``-vectors)."""
    vocab = p0.shape[-1]
    a_t = a_t.reshape(-1, 1, 1)
    a_s = a_s.reshape(-1, 1, 1)
    r = torch.where(a_s > 0, a_t / a_s.clamp_min(1e-12), torch.zeros_like(a_t)).clamp(max=1.0)
    onehot = nn.functional.one_hot(xt, vocab).to(p0.dtype)
    like = r * onehot + (1.0 - r) / vocab          # q(x_t | x_s = v), over v
    denom = a_t * onehot + (1.0 - a_t) / vocab     # q(x_t | x_0 = u), over u
    w = p0 / denom
    mix = a_s * w + (1.0 - a_s) / vocab * w.sum(-1, keepdim=True)
    post = like * mix
    return post / post.sum(-1, keepdim=True)


class Denoiser(nn.Module):
    """``p_theta(x_0 | x_tau)``: an MLP over the flattened one-hot string and time features
    (``alpha`` and sin/cos of it at ``n_freq`` frequencies), to per-position logits."""

    def __init__(self, vocab: int, length: int, hidden: int = 128, depth: int = 3,
                 n_freq: int = 4) -> None:
        super().__init__()
        self.vocab, self.length, self.n_freq = vocab, length, n_freq
        layers: list[nn.Module] = [nn.Linear(vocab * length + 1 + 2 * n_freq, hidden), nn.SiLU()]
        for _ in range(depth - 1):
            layers += [nn.Linear(hidden, hidden), nn.SiLU()]
        layers.append(nn.Linear(hidden, vocab * length))
        self.net = nn.Sequential(*layers)

    def forward(self, xt: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        """Logits ``B x L x V`` of the clean token at each position."""
        k = torch.arange(1, self.n_freq + 1, dtype=torch.float32) * math.pi
        a = a.reshape(-1, 1).float()
        feats = [nn.functional.one_hot(xt, self.vocab).flatten(1).float(), a,
                 torch.sin(a * k), torch.cos(a * k)]
        return self.net(torch.cat(feats, dim=1)).view(-1, self.length, self.vocab)


@dataclass
class Rollout:
    """A batch of sampled strings with their denoising trajectories.

    ``states[k]`` is the string at ``taus[k]`` (``states[0]`` the uniform start,
    ``states[-1]`` the final sample); ``alphas[k] = alpha(taus[k])``."""

    states: list[torch.Tensor]
    taus: torch.Tensor
    alphas: torch.Tensor

    @property
    def final(self) -> torch.Tensor:
        """The clean samples ``x_0`` (``B x L``)."""
        return self.states[-1]


@torch.no_grad()
def sample(model: Denoiser, n: int, steps: int, generator: torch.Generator,
           schedule: str = "linear") -> Rollout:
    """``n`` strings from uniform noise by ``steps`` reverse steps (the trajectory kept)."""
    taus = time_grid(steps)
    alphas = alpha(taus, schedule)
    x = torch.randint(0, model.vocab, (n, model.length), generator=generator)
    states = [x]
    for k in range(steps):
        a_t = alphas[k].expand(n)
        a_s = alphas[k + 1].expand(n)
        p0 = torch.softmax(model(x, a_t), dim=-1)
        probs = reverse_probs(p0, x, a_t, a_s)
        x = torch.multinomial(probs.reshape(-1, model.vocab), 1,
                              generator=generator).view(n, model.length)
        states.append(x)
    return Rollout(states, taus, alphas)
