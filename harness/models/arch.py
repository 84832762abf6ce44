"""Facts that follow exactly from a model's architecture config (no weights, no torch).

KV-cache bytes per token: what a decoder stores per generated or prompt token, for every
layer, to attend back to it later::

    kv_bytes_per_token(config) = n_layers x n_kv_heads x head_dim x n_tensors x dtype_bytes

``n_tensors`` is 2 (K and V) for ordinary attention and 1 when keys and values are one
tensor (K=V projection sharing, config ``qkv_sharing`` in ``{"q-kv", "q=k=v"}``, as the
suite's recipe products record it). ``n_kv_heads`` is ``num_key_value_heads`` (MHA when
absent), ``head_dim`` the config's own or ``hidden_size // num_attention_heads``, and
``dtype_bytes`` the width of the dtype the cache is held in (default: the config's
``torch_dtype``/``dtype``, else float32). Works on a transformers ``PretrainedConfig`` or on
the ``config.json`` mapping.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["DTYPE_BYTES", "KV_SHARED_MODES", "kv_bytes_per_token", "kv_shape"]

DTYPE_BYTES: dict[str, int] = {
    "float32": 4, "float": 4, "fp32": 4, "float16": 2, "half": 2, "fp16": 2, "bfloat16": 2,
    "bf16": 2, "float64": 8, "double": 8, "float8_e4m3fn": 1, "float8_e5m2": 1, "int8": 1,
}
KV_SHARED_MODES = frozenset({"q-kv", "q=k=v"})
"""``qkv_sharing`` values under which K and V are one tensor (stored once)."""


def _get(config: Any, key: str, default: Any = None) -> Any:
    if isinstance(config, Mapping):
        return config.get(key, default)
    return getattr(config, key, default)


def _dtype_name(value: Any) -> str | None:
    if value is None:
        return None
    return str(value).removeprefix("torch.")


def kv_shape(config: Any) -> dict[str, int]:
    """``n_layers``, ``n_kv_heads``, ``head_dim`` and ``n_tensors`` (2, or 1 when K=V)."""
    text = _get(config, "text_config")
    if text is not None and _get(config, "num_hidden_layers") is None:
        config = text  # multimodal configs keep the decoder's facts in text_config
    layers = _get(config, "num_hidden_layers", _get(config, "n_layer"))
    heads = _get(config, "num_attention_heads", _get(config, "n_head"))
    if layers is None or heads is None:
        raise ValueError("config has no num_hidden_layers / num_attention_heads")
    kv_heads = _get(config, "num_key_value_heads") or heads
    head_dim = _get(config, "head_dim") or int(_get(config, "hidden_size")) // int(heads)
    shared = _get(config, "qkv_sharing") in KV_SHARED_MODES
    return {"n_layers": int(layers), "n_kv_heads": int(kv_heads), "head_dim": int(head_dim),
            "n_tensors": 1 if shared else 2}


def kv_bytes_per_token(config: Any, dtype: str | None = None) -> int:
    """Exact KV-cache bytes per token of the architecture (see the module docstring).

    Args:
        config: A transformers config or its ``config.json`` mapping.
        dtype: The dtype the cache is held in (``float32``...); default: the config's.
    """
    shape = kv_shape(config)
    name = _dtype_name(dtype) or _dtype_name(_get(config, "torch_dtype")) \
        or _dtype_name(_get(config, "dtype")) or "float32"
    if name not in DTYPE_BYTES:
        raise ValueError(f"unknown dtype {name!r}: one of {', '.join(DTYPE_BYTES)}")
    return (shape["n_layers"] * shape["n_kv_heads"] * shape["head_dim"] * shape["n_tensors"]
            * DTYPE_BYTES[name])
