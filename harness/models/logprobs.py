"""Exact log-probabilities of a given text under a local transformers model.

Perplexity needs the probability of *given* tokens, which a chat completion API does not
return; the local backends hold the model itself. :func:`causal_lm_of` finds it behind an
Inspect model: the suite's ``whitebox/`` (``api.lm``) or Inspect's ``hf/`` (``api.model``,
``api.tokenizer``). Any other provider raises :class:`LogprobsUnavailable`, which says
which providers work.

:func:`text_bits` scores one text as one sequence: it is tokenised with the model's own
tokenizer (no special tokens added), preceded by one start token (the tokenizer's BOS, else
its EOS, the usual document separator), and every text token is scored given the start
token and the tokens before it. The result is the total negative log-likelihood in bits
and the number of tokens, so bits per byte is ``bits / len(text.encode("utf-8"))`` for
every tokenizer alike.
"""

from __future__ import annotations

import contextlib
import math
from typing import Any

__all__ = ["LogprobsUnavailable", "causal_lm_of", "text_bits"]


class LogprobsUnavailable(RuntimeError):
    """The model gives no access to prompt log-probabilities."""


def causal_lm_of(api: Any) -> tuple[Any, Any, Any]:
    """``(model, tokenizer, lock)`` behind an Inspect ``ModelAPI`` (lock may be a no-op).

    Raises:
        LogprobsUnavailable: the provider is not ``whitebox/`` or ``hf/``.
    """
    lm = getattr(api, "lm", None)
    if lm is not None and hasattr(lm, "model") and hasattr(lm, "tokenizer"):
        return lm.model, lm.tokenizer, getattr(api, "_lock", None) or contextlib.nullcontext()
    model, tokenizer = getattr(api, "model", None), getattr(api, "tokenizer", None)
    if model is not None and tokenizer is not None and hasattr(model, "config") \
            and callable(model):
        return model, tokenizer, contextlib.nullcontext()
    name = getattr(api, "model_name", type(api).__name__)
    raise LogprobsUnavailable(
        f"model {name!r} ({type(api).__name__}) gives no prompt log-probabilities: scoring "
        "perplexity needs a local transformers model, e.g. --model whitebox/NAME "
        "-M model_path=DIR or --model hf/NAME -M model_path=DIR")


def _start_id(tokenizer: Any) -> int:
    for attr in ("bos_token_id", "eos_token_id"):
        value = getattr(tokenizer, attr, None)
        if value is not None:
            return int(value)
    raise LogprobsUnavailable("the tokenizer has neither a BOS nor an EOS token to start from")


def text_bits(model: Any, tokenizer: Any, text: str) -> tuple[float, int]:
    """Total negative log2-likelihood of ``text``'s tokens after one start token, and the
    number of tokens (see the module docstring)."""
    import torch

    ids = list(tokenizer(text, add_special_tokens=False).input_ids)
    if not ids:
        return 0.0, 0
    limit = getattr(model.config, "max_position_embeddings", None)
    if limit is not None and len(ids) + 1 > int(limit):
        raise ValueError(f"{len(ids) + 1} tokens exceed the model's {limit} positions")
    device = next(model.parameters()).device
    x = torch.tensor([[_start_id(tokenizer), *ids]], device=device)
    with torch.inference_mode():
        logits = model(input_ids=x, use_cache=False).logits[0, :-1].float()
        logp = torch.log_softmax(logits, dim=-1)
        nll = -logp.gather(1, x[0, 1:, None]).sum()
    return float(nll) / math.log(2), len(ids)
