"""KV-cache bytes per token from the architecture config."""

from __future__ import annotations

import pytest

from harness.models.arch import kv_bytes_per_token, kv_shape

SMOLLM2 = {"num_hidden_layers": 30, "num_attention_heads": 9, "num_key_value_heads": 3,
           "hidden_size": 576, "torch_dtype": "bfloat16"}


def test_smollm2_135m() -> None:
    # 30 layers x 3 KV heads x 64 dims x (K, V) x 2 bytes
    assert kv_bytes_per_token(SMOLLM2) == 30 * 3 * 64 * 2 * 2 == 23040
    assert kv_bytes_per_token(SMOLLM2, "float32") == 46080
    assert kv_bytes_per_token(SMOLLM2, "torch.float16") == 23040


def test_defaults_and_sharing() -> None:
    mha = {"num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 32}
    assert kv_shape(mha) == {"n_layers": 2, "n_kv_heads": 4, "head_dim": 8, "n_tensors": 2}
    assert kv_bytes_per_token(mha) == 2 * 4 * 8 * 2 * 4  # float32 when unstated
    for mode, tensors in (("qkv", 2), ("qk-v", 2), ("q-kv", 1), ("q=k=v", 1)):
        assert kv_bytes_per_token({**mha, "qkv_sharing": mode}) == 2 * 4 * 8 * tensors * 4
    assert kv_bytes_per_token({"text_config": mha}) == kv_bytes_per_token(mha)
    with pytest.raises(ValueError, match="unknown dtype"):
        kv_bytes_per_token(mha, "int3")
    with pytest.raises(ValueError, match="num_hidden_layers"):
        kv_bytes_per_token({"hidden_size": 3})
