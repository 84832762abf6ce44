"""The two GRPO objectives on a uniform discrete diffusion model, and their estimators.

Both share group-relative advantages (a group is every sample drawn in a step from the
unconditional model: ``A_i = (r_i - mean r) / (std r + eps)``, zero when all rewards tie) and
PPO's clipped surrogate ``min(rho A, clip(rho, 1 - eps, 1 + eps) A)`` on a log-ratio ``rho``
to the policy that drew the batch. They differ in what the action and its log-probability
are:

* **naive per-step GRPO** (the paper's baseline): every reverse step ``x_{t_k} -> x_{t_{k+1}}``
  of the sampled trajectory is an action, with log-probability
  ``log p_theta(x_{t_{k+1}} | x_{t_k})`` (summed over positions) from the reverse kernel of
  :func:`methods.udm.diffusion.reverse_probs`; the surrogate is averaged over the steps.
* **UDM-GRPO** (Wang et al., arXiv 2604.18518): the final clean sample ``x_0`` is the one
  action. Its log-likelihood is estimated by *reconstructing* the trajectory with the forward
  process: at each sampler time ``tau_k`` a fresh ``x~_k ~ q(. | x_0)`` replaces the sampled
  state, and ``log p_theta(x_0 | x~_k)`` (the pretraining objective's own term) is the
  per-time log-probability; the surrogate is averaged over the ``K`` reconstructions.

This is our reading of the paper's two insights (final sample as action; forward-process
reconstruction aligned with pretraining), not its code. ``reconstruction_logprob`` is an
unbiased Monte Carlo estimate of ``(1/K) sum_k E_{x~ ~ q(.|x_0, tau_k)} log p_theta(x_0|x~)``
(and its gradient of that quantity's gradient), because the noise distribution does not
depend on ``theta``; ``tests/methods/udm`` checks both against exact enumeration.
Same budget: with ``K`` equal to the sampler's step count both objectives cost ``B x K``
denoiser passes per update.
"""

from __future__ import annotations

import torch

from methods.udm.diffusion import Denoiser, Rollout, q_sample, reverse_probs

__all__ = ["Batch", "clipped_surrogate", "group_advantages", "naive_batch", "naive_logprobs",
           "reconstruction_logprob", "udm_batch", "udm_logprobs"]

Batch = dict[str, torch.Tensor]
"""Flattened actions of one rollout: inputs of the log-probability and ``logp_old``/``adv``."""


def group_advantages(rewards: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """``(r - mean) / (std + eps)`` over the group (population std); zeros if all tie."""
    std = rewards.std(unbiased=False)
    if float(std) < 1e-8:
        return torch.zeros_like(rewards)
    return (rewards - rewards.mean()) / (std + eps)


def clipped_surrogate(logp_new: torch.Tensor, logp_old: torch.Tensor, adv: torch.Tensor,
                      clip_eps: float) -> torch.Tensor:
    """PPO/GRPO's clipped objective as a loss (negated mean over actions)."""
    ratio = torch.exp(logp_new - logp_old)
    clipped = ratio.clamp(1.0 - clip_eps, 1.0 + clip_eps)
    return -torch.minimum(ratio * adv, clipped * adv).mean()


# ----------------------------------------------------------------------------- naive


def naive_logprobs(model: Denoiser, batch: Batch) -> torch.Tensor:
    """``log p_theta(x_s | x_t)`` of each recorded reverse step, summed over positions."""
    p0 = torch.softmax(model(batch["xt"], batch["a_t"]), dim=-1)
    probs = reverse_probs(p0, batch["xt"], batch["a_t"], batch["a_s"])
    picked = probs.gather(-1, batch["xs"].unsqueeze(-1)).squeeze(-1)
    return torch.log(picked.clamp_min(1e-30)).sum(-1)


def naive_batch(model: Denoiser, rollout: Rollout, adv: torch.Tensor) -> Batch:
    """Every step of every trajectory as an action (``B x steps`` rows), with the log-prob
    under the current (rollout) policy as ``logp_old``."""
    steps = len(rollout.states) - 1
    n = rollout.final.shape[0]
    batch: Batch = {
        "xt": torch.cat(rollout.states[:-1]),
        "xs": torch.cat(rollout.states[1:]),
        "a_t": rollout.alphas[:-1].repeat_interleave(n),
        "a_s": rollout.alphas[1:].repeat_interleave(n),
        "adv": adv.repeat(steps),
    }
    with torch.no_grad():
        batch["logp_old"] = naive_logprobs(model, batch)
    return batch


# ----------------------------------------------------------------------------- UDM-GRPO


def udm_logprobs(model: Denoiser, batch: Batch) -> torch.Tensor:
    """``log p_theta(x_0 | x~)`` of each reconstruction, summed over positions."""
    logits = model(batch["xt"], batch["a_t"])
    logp = torch.log_softmax(logits, dim=-1)
    return logp.gather(-1, batch["x0"].unsqueeze(-1)).squeeze(-1).sum(-1)


def udm_batch(model: Denoiser, x0: torch.Tensor, alphas: torch.Tensor, adv: torch.Tensor,
              generator: torch.Generator) -> Batch:
    """The final samples ``x0`` re-noised by the forward process once per time in
    ``alphas`` (``B x K`` rows), with ``logp_old`` under the current policy."""
    n, k = x0.shape[0], alphas.shape[0]
    a = alphas.repeat_interleave(n)
    x0_rep = x0.repeat(k, 1)
    batch: Batch = {"x0": x0_rep, "a_t": a,
                    "xt": q_sample(x0_rep, a, model.vocab, generator), "adv": adv.repeat(k)}
    with torch.no_grad():
        batch["logp_old"] = udm_logprobs(model, batch)
    return batch


def reconstruction_logprob(model: Denoiser, x0: torch.Tensor, alphas: torch.Tensor,
                           generator: torch.Generator) -> torch.Tensor:
    """The forward-process estimate of each sample's log-likelihood term: the mean over the
    ``K`` times of ``log p_theta(x_0 | x~_k)``, ``x~_k ~ q(. | x_0, alpha_k)`` (``B``-vector,
    differentiable in ``theta``)."""
    n, k = x0.shape[0], alphas.shape[0]
    a = alphas.repeat_interleave(n)
    x0_rep = x0.repeat(k, 1)
    batch = {"x0": x0_rep, "a_t": a, "xt": q_sample(x0_rep, a, model.vocab, generator)}
    return udm_logprobs(model, batch).view(k, n).mean(0)
