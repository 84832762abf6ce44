"""Second moments ``C = E[k kᵀ]`` of MLP keys (the inputs of ``down_proj``) over a corpus.

ROME and MEMIT weigh a weight update by ``C⁻¹`` so that it moves the edited key's output
while disturbing the keys the model usually sees as little as possible. ``C`` depends only on
the unedited model, the layer and the corpus, so it is computed once, kept in memory for the
process and cached on disk under ``~/.cache/evalsuite/covariance/`` with a key that hashes
the corpus text, the model's configuration and a checksum of the layer's weights (so a
different corpus or model never reuses a stale file).

The corpus here is small (the benchmark's own prompts: a few thousand tokens), so ``C`` is
rank-deficient for a wide MLP; :func:`regularised` adds a ridge ``λ·mean(diag C)·I`` before
it is inverted. ROME used 100k Wikipedia samples; the shrinkage is the documented stand-in.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from methods.editors.parametric.base import down_proj, module_hook, token_ids

CACHE_ENV = "EVALSUITE_COVARIANCE_DIR"
DEFAULT_RIDGE = 0.1
_MEMO: dict[str, torch.Tensor] = {}
_LOCK = threading.Lock()


def cache_dir() -> Path:
    """``$EVALSUITE_COVARIANCE_DIR`` or ``~/.cache/evalsuite/covariance``."""
    env = os.environ.get(CACHE_ENV)
    return Path(env) if env else Path.home() / ".cache" / "evalsuite" / "covariance"


def corpus_hash(texts: Sequence[str]) -> str:
    """sha256 of the corpus (texts joined by a record separator)."""
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode() + b"\x1e")
    return digest.hexdigest()


def _model_fingerprint(model: Any, layer: int) -> str:
    weight = down_proj(model, layer).weight.detach()
    config = getattr(model, "config", None)
    described = json.dumps(config.to_dict() if config is not None else {}, sort_keys=True,
                           default=str)
    stats = f"{float(weight.double().sum()):.10e}:{float(weight.double().abs().sum()):.10e}"
    return hashlib.sha256(f"{described}|{layer}|{tuple(weight.shape)}|{stats}".encode()).hexdigest()


def cache_key(model: Any, layer: int, texts: Sequence[str]) -> str:
    """The disk/memo key of one (model, layer, corpus)."""
    return f"{_model_fingerprint(model, layer)[:16]}-{corpus_hash(texts)[:16]}-L{layer}"


def compute(model: Any, tokenizer: Any, layers: Sequence[int], texts: Sequence[str],
            batch_size: int = 16) -> dict[int, tuple[torch.Tensor, int]]:
    """``{layer: (sum of k kᵀ over every token position, n positions)}`` in one pass."""
    if not texts:
        raise ValueError("the covariance corpus is empty: pass train triples to the editor")
    sums: dict[int, torch.Tensor] = {}
    counts = {layer: 0 for layer in layers}
    current: dict[str, Any] = {}

    def grab(layer: int) -> Any:
        def hook(module: Any, args: tuple[Any, ...]) -> None:
            keys = args[0][current["mask"]].double()  # [positions, d_ff]
            sums[layer] = sums.get(layer, 0) + keys.T @ keys
            counts[layer] += int(keys.shape[0])
        return hook

    device = next(model.parameters()).device
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else \
        tokenizer.eos_token_id
    rows = [token_ids(tokenizer, t) for t in texts]
    with torch.no_grad(), contextlib.ExitStack() as stack:
        for layer in layers:
            stack.enter_context(module_hook(down_proj(model, layer), grab(layer), pre=True))
        for start in range(0, len(rows), batch_size):
            chunk = rows[start:start + batch_size]
            width = max(len(r) for r in chunk)
            ids = torch.tensor([r + [pad] * (width - len(r)) for r in chunk], device=device)
            current["mask"] = torch.tensor([[j < len(r) for j in range(width)] for r in chunk],
                                           device=device)
            model(input_ids=ids, use_cache=False)
    return {layer: (sums[layer], counts[layer]) for layer in layers}


def second_moments(model: Any, tokenizer: Any, layers: Sequence[int], texts: Sequence[str],
                   cache: Path | None = None) -> dict[int, torch.Tensor]:
    """``{layer: C}`` (float64 ``[d_ff, d_ff]``, ``C = Σ k kᵀ / n``), from memory, disk or
    one forward pass over the corpus, in that order. Each disk file records its corpus hash,
    its token count and its layer next to the matrix."""
    folder = cache if cache is not None else cache_dir()
    out: dict[int, torch.Tensor] = {}
    missing: list[int] = []
    with _LOCK:
        for layer in layers:
            key = cache_key(model, layer, texts)
            path = folder / f"{key}.pt"
            if key in _MEMO:
                out[layer] = _MEMO[key]
            elif path.is_file():
                stored = torch.load(path, weights_only=True)
                _MEMO[key] = out[layer] = stored["moment"]
            else:
                missing.append(layer)
        if missing:
            folder.mkdir(parents=True, exist_ok=True)
            for layer, (total, n) in compute(model, tokenizer, missing, texts).items():
                moment = total / max(n, 1)
                key = cache_key(model, layer, texts)
                tmp = folder / f".{key}.{os.getpid()}.tmp"
                torch.save({"moment": moment, "tokens": n, "layer": layer,
                            "corpus_sha256": corpus_hash(texts), "texts": len(texts)}, tmp)
                tmp.replace(folder / f"{key}.pt")
                _MEMO[key] = out[layer] = moment
    return out


def regularised(moment: torch.Tensor, ridge: float = DEFAULT_RIDGE) -> torch.Tensor:
    """``C + ridge·mean(diag C)·I``: invertible however few tokens the corpus had."""
    if ridge < 0:
        raise ValueError(f"ridge must be >= 0, got {ridge}")
    scale = float(torch.diagonal(moment).mean())
    eye = torch.eye(moment.shape[0], dtype=moment.dtype, device=moment.device)
    return moment + ridge * max(scale, 1e-12) * eye
