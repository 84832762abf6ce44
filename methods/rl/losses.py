"""Policy-gradient losses over groups of ``K`` responses per prompt: GRPO and PMD-mean.

Shapes: ``rewards`` is ``[P, K]`` (P prompts, K responses each); token tensors are
``[P*K, T]`` with a 0/1 ``mask`` over the response tokens (row ``i*K + j`` is response ``j``
of prompt ``i``). Log-probs are natural logs of the sampled tokens.

* **GRPO** (Shao et al., DeepSeekMath, arXiv 2402.03300, eq. 3): advantage
  ``(r - mean_group) / (std_group + eps)`` shared by every token of a response; per token
  ``min(rho A, clip(rho, 1-eps, 1+eps) A) - beta KL_k3``, ``rho = pi/pi_old`` per token,
  averaged over the response's tokens, then over responses; the loss is its negative.
* **PMD-mean** (Xu et al., arXiv 2602.05933): per response
  ``tau/2 (A/tau - log(pi(y)/pi_old(y)))^2`` with the leave-one-out advantage ``A = r -
  mean of the other K-1 rewards`` and the sequence log-ratio (summed over tokens), averaged
  over responses; ``beta`` times the same per-token k3 KL is added when ``beta > 0``.

The KL term is Schulman's k3 estimator against the frozen reference policy,
``exp(ref - logp) - (ref - logp) - 1`` per token (unbiased for ``KL(pi || ref)`` under
samples from ``pi``, and never negative).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = ["LossOut", "grpo_advantages", "grpo_loss", "k3_kl", "loo_advantages",
           "pmd_mean_loss"]


@dataclass
class LossOut:
    """The scalar loss with the diagnostics a training log records."""

    loss: torch.Tensor
    kl: float
    clip_frac: float
    log_ratio: float
    """Mean absolute sequence log-ratio ``|log pi(y)/pi_old(y)|`` (staleness drift)."""


def _groups(rewards: torch.Tensor) -> torch.Tensor:
    if rewards.dim() != 2 or rewards.shape[1] < 2:
        raise ValueError("rewards must be [prompts, K] with K >= 2")
    return rewards.double()


def grpo_advantages(rewards: torch.Tensor, eps: float = 1e-4) -> torch.Tensor:
    """Group-normalised advantages ``(r - mean) / (std + eps)`` (population std), ``[P, K]``."""
    r = _groups(rewards)
    mean = r.mean(dim=1, keepdim=True)
    std = r.std(dim=1, unbiased=False, keepdim=True)
    return (r - mean) / (std + eps)


def loo_advantages(rewards: torch.Tensor) -> torch.Tensor:
    """Leave-one-out advantages ``r_i - mean_{j != i} r_j``, ``[P, K]``."""
    r = _groups(rewards)
    k = r.shape[1]
    return r - (r.sum(dim=1, keepdim=True) - r) / (k - 1)


def k3_kl(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """Per-token k3 estimate of ``KL(pi || ref)``."""
    delta = ref_logp - logp
    return torch.exp(delta) - delta - 1


def _per_response_mean(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return (values * mask).sum(dim=1) / mask.sum(dim=1).clamp_min(1)


def grpo_loss(logp: torch.Tensor, old_logp: torch.Tensor, ref_logp: torch.Tensor | None,
              mask: torch.Tensor, rewards: torch.Tensor, clip_eps: float = 0.2,
              beta: float = 0.0) -> LossOut:
    """DeepSeekMath's GRPO objective, negated (see the module docstring)."""
    adv = grpo_advantages(rewards).reshape(-1, 1).to(logp.dtype)
    log_rho = logp - old_logp
    rho = torch.exp(log_rho)
    unclipped = rho * adv
    clipped = torch.clamp(rho, 1 - clip_eps, 1 + clip_eps) * adv
    per_token = torch.minimum(unclipped, clipped)
    kl_tok = k3_kl(logp, ref_logp) if ref_logp is not None else torch.zeros_like(logp)
    if beta:
        per_token = per_token - beta * kl_tok
    loss = -_per_response_mean(per_token, mask).mean()
    with torch.no_grad():
        tokens = mask.sum().clamp_min(1)
        clip_frac = float(((unclipped != clipped).to(mask.dtype) * mask).sum() / tokens)
        seq_ratio = (log_rho * mask).sum(dim=1).abs().mean()
        kl = float(_per_response_mean(kl_tok, mask).mean())
    return LossOut(loss, kl, clip_frac, float(seq_ratio))


def pmd_mean_loss(logp: torch.Tensor, old_logp: torch.Tensor, ref_logp: torch.Tensor | None,
                  mask: torch.Tensor, rewards: torch.Tensor, tau: float = 1.0,
                  beta: float = 0.0) -> LossOut:
    """PMD-mean's regression loss (see the module docstring)."""
    if not tau > 0:
        raise ValueError("tau must be > 0")
    adv = loo_advantages(rewards).reshape(-1).to(logp.dtype)
    seq_log_ratio = ((logp - old_logp) * mask).sum(dim=1)
    loss = (tau / 2 * (adv / tau - seq_log_ratio) ** 2).mean()
    kl_tok = k3_kl(logp, ref_logp) if ref_logp is not None else torch.zeros_like(logp)
    if beta:
        loss = loss + beta * _per_response_mean(kl_tok, mask).mean()
    with torch.no_grad():
        kl = float(_per_response_mean(kl_tok, mask).mean())
    return LossOut(loss, kl, 0.0, float(seq_log_ratio.detach().abs().mean()))
