"""Residual-stream activations of SmolLM2-135M for the PolySAE task, computed once per
process (deterministic: fp32 on CPU, fixed windows, no sampling).

Corpus tokens: ``n_windows`` windows of ``window`` tokens taken at evenly spaced offsets
of the ``pydoc`` corpus's training text (:mod:`harness.corpus`, Python's language
reference, fixed for a given Python), each run alone; probe sentences one by one. The
first position of every sequence is dropped (its residual norm is an order of magnitude
above the rest, the attention-sink token). Only the first ``layer`` blocks run: the
hidden state after them is read by a hook, and the rest of the model is skipped.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

DEFAULT_LAYER = 15
"""SmolLM2-135M has 30 blocks; the residual stream after block 15 is the middle layer."""


@functools.cache
def _model() -> object:
    from harness.models.whitebox import WhiteBoxLM

    return WhiteBoxLM.load()


def _run(ids: Sequence[Sequence[int]], layer: int) -> list[NDArray[np.float32]]:
    """The residual stream after ``layer`` blocks for each id sequence (position 0 dropped)."""
    import torch

    lm = _model()
    blocks = lm.model.model.layers  # type: ignore[attr-defined]
    if not 1 <= layer <= len(blocks):
        raise ValueError(f"layer must be in 1..{len(blocks)}, got {layer}")
    caught: list[torch.Tensor] = []

    class _Stop(Exception):
        pass

    def hook(_module: object, _args: object, output: object) -> None:
        caught.append(output[0] if isinstance(output, tuple) else output)  # type: ignore[arg-type]
        raise _Stop

    handle = blocks[layer - 1].register_forward_hook(hook)
    out: list[NDArray[np.float32]] = []
    try:
        with torch.inference_mode():
            for seq in ids:
                caught.clear()
                try:
                    lm.model(input_ids=torch.tensor([list(seq)]), use_cache=False)  # type: ignore[attr-defined]
                except _Stop:
                    pass
                out.append(caught[0][0, 1:].float().numpy().copy())
    finally:
        handle.remove()
    return out


@functools.cache
def corpus_activations(n_windows: int, window: int, layer: int = DEFAULT_LAYER,
                       corpus: str = "pydoc") -> tuple[NDArray[np.float32], ...]:
    """One ``[window - 1, d]`` array per corpus window."""
    from harness.corpus import load_corpus

    lm = _model()
    text = load_corpus(corpus).train
    ids = lm.tokenizer(text, add_special_tokens=False).input_ids  # type: ignore[attr-defined]
    starts = np.linspace(0, len(ids) - window, n_windows).astype(int)
    return tuple(_run([ids[s:s + window] for s in starts], layer))


@functools.cache
def sentence_activations(texts: tuple[str, ...],
                         layer: int = DEFAULT_LAYER) -> tuple[NDArray[np.float32], ...]:
    """One ``[tokens - 1, d]`` array per sentence."""
    lm = _model()
    ids = [lm.tokenizer(t, add_special_tokens=False).input_ids for t in texts]  # type: ignore[attr-defined]
    return tuple(_run(ids, layer))
