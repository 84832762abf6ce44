"""The policy being trained: a transformers causal LM with its tokenizer, sampling ``K``
responses to one prompt and scoring response tokens' log-probs.

Why a sampling loop of our own rather than ``generate``: each row's random draws come from
an explicit ``torch.Generator`` the trainer seeds per step, so a run is reproducible and a
resumed run draws exactly what an uninterrupted one would (``generate`` reads the global
RNG). The ``K`` responses of one prompt share its tokens, so a group is one unpadded batch.
Responses are padded to ``max_new_tokens`` after the end-of-sequence token; the mask covers
the response up to and including it (a response cut at the budget has no EOS).

Log-probs for the losses are always computed by :meth:`Policy.logprobs` (one full forward
of prompt + responses), both for ``pi_old`` when the rollouts are made and for ``pi`` when
they are trained on, so at staleness 0 the ratio is exactly 1 before the update.
Prompts render exactly as ``whitebox/`` renders them (:meth:`WhiteBoxLM.chat_prompt`), so a
checkpoint is evaluated on the prompt format it was trained on.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch.nn import functional as F  # noqa: N812

from harness.models.whitebox import Prompt, WhiteBoxLM

__all__ = ["Policy", "Sampled"]


@dataclass
class Sampled:
    """``K`` responses to one prompt: token ids ``[K, T]`` (padded) and a 0/1 mask."""

    tokens: torch.Tensor
    mask: torch.Tensor


class Policy:
    """A causal LM (trained in place) and its tokenizer."""

    def __init__(self, model: Any, tokenizer: Any) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self._render = WhiteBoxLM(model, tokenizer)
        eos = tokenizer.eos_token_id
        if eos is None:
            raise ValueError("the tokenizer has no eos_token_id: responses could not end")
        self.eos_id = int(eos)
        pad = tokenizer.pad_token_id
        self.pad_id = int(pad) if pad is not None else self.eos_id
        params = inspect.signature(model.forward).parameters
        self._cache_arg = "cache" if "cache" in params else "past_key_values"

    def encode(self, prompt: Prompt) -> list[int]:
        """Prompt token ids, rendered as ``whitebox/`` does (chat template for messages)."""
        ids = self._render.encode(prompt)[0].tolist()
        if not ids:
            raise ValueError("empty prompt")
        return [int(t) for t in ids]

    def decode(self, tokens: torch.Tensor, mask: torch.Tensor) -> str:
        """A response's text: the masked tokens, special tokens dropped."""
        kept = tokens[mask.bool()].tolist()
        return str(self.tokenizer.decode(kept, skip_special_tokens=True))

    @torch.no_grad()
    def sample(self, prompt_ids: Sequence[int], k: int, max_new_tokens: int,
               generator: torch.Generator, temperature: float = 1.0) -> Sampled:
        """``k`` responses by ancestral sampling at ``temperature`` from ``generator``."""
        if k < 1 or max_new_tokens < 1 or not temperature > 0:
            raise ValueError("k and max_new_tokens must be >= 1 and temperature > 0")
        was_training = self.model.training
        self.model.eval()
        ids = torch.tensor([list(prompt_ids)] * k, dtype=torch.long)
        out = self.model(input_ids=ids, use_cache=True)
        cache = WhiteBoxLM.cache_of(out)
        logits = out.logits[:, -1]
        tokens = torch.full((k, max_new_tokens), self.pad_id, dtype=torch.long)
        mask = torch.zeros((k, max_new_tokens), dtype=torch.float32)
        done = torch.zeros(k, dtype=torch.bool)
        for t in range(max_new_tokens):
            probs = torch.softmax(logits.double() / temperature, dim=-1)
            nxt = torch.multinomial(probs, 1, generator=generator)[:, 0]
            nxt = torch.where(done, torch.full_like(nxt, self.pad_id), nxt)
            tokens[:, t] = nxt
            mask[:, t] = (~done).float()
            done = done | (nxt == self.eos_id)
            if bool(done.all()) or t == max_new_tokens - 1:
                break
            out = self.model(input_ids=nxt[:, None], use_cache=True,
                             **{self._cache_arg: cache})
            cache = WhiteBoxLM.cache_of(out)
            logits = out.logits[:, -1]
        self.model.train(was_training)
        return Sampled(tokens, mask)

    def logprobs(self, prompt_ids: Sequence[int], tokens: torch.Tensor,
                 model: Any | None = None) -> torch.Tensor:
        """Log-probs ``[K, T]`` of ``tokens`` after the prompt under ``model`` (default: the
        policy's; pass the frozen reference for KL). Gradients flow when enabled."""
        net = model if model is not None else self.model
        k = tokens.shape[0]
        prompt = torch.tensor([list(prompt_ids)] * k, dtype=torch.long)
        full = torch.cat([prompt, tokens], dim=1)
        logits = net(input_ids=full, use_cache=False).logits
        start = prompt.shape[1] - 1
        pred = logits[:, start:start + tokens.shape[1]].float()
        return torch.gather(F.log_softmax(pred, dim=-1), 2, tokens[:, :, None])[:, :, 0]
