"""Compression schemes on a tiny random Llama: quantisation error falls with the bits,
pruning zeroes the stated share, and a compressed model's readouts move away from the
uncompressed ones (which the ``full`` baseline reproduces exactly)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("transformers") is None,
                                reason="needs the cpu extra (torch, transformers)")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> str:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=50, hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=64, tie_word_embeddings=True)
    folder = tmp_path_factory.mktemp("tiny_llama")
    LlamaForCausalLM(config).save_pretrained(folder)
    return str(folder)


def _inputs(model: str) -> dict[str, object]:
    rng = np.random.default_rng(0)
    pairs = [[[0, *rng.integers(1, 50, 6).tolist()], [0, *rng.integers(1, 50, 6).tolist()]]
             for _ in range(5)]
    sentences = [[0, *rng.integers(1, 50, int(rng.integers(5, 10))).tolist()]
                 for _ in range(12)]
    return {"pairs": pairs, "sentences": sentences, "layers": [1, 2], "model": model}


def test_quantiser_and_pruner() -> None:
    import torch

    from methods.brain_compression.compress import parse_scheme, prune_magnitude, quantise_rtn

    w = torch.randn(16, 70, generator=torch.Generator().manual_seed(0))
    errors = [float((quantise_rtn(w, b, 32) - w).norm() / w.norm()) for b in (2, 3, 4, 8)]
    assert errors == sorted(errors, reverse=True) and errors[-1] < 0.01
    assert len(torch.unique(quantise_rtn(w, 3, 32)[0, :32])) <= 7
    pruned = prune_magnitude(w, 0.5)
    assert float((pruned == 0).float().mean()) == pytest.approx(0.5, abs=0.01)
    kept = pruned != 0
    assert float(w[kept].abs().min()) >= float(w[~kept].abs().max())
    assert parse_scheme("rtn4") == ("rtn", 4.0) and parse_scheme("prune0.3") == ("prune", 0.3)
    with pytest.raises(ValueError):
        parse_scheme("gptq4")


def test_compressed_moves_readouts_and_full_does_not(tiny: str) -> None:
    from environments.brain_compression import linear_cka
    from methods.brain_compression.compress import compressed, full

    inputs = _inputs(tiny)
    ref = full(inputs, {}, 0)
    again = full(inputs, {"scheme": "prune0.5"}, 0)  # the baseline ignores the scheme
    assert np.array_equal(ref["reps"], again["reps"]) and ref["sparsity"] == 0.0
    pruned = compressed(inputs, {"scheme": "prune0.5"}, 0)
    assert pruned["sparsity"] == pytest.approx(0.5, abs=0.01)
    assert not np.allclose(pruned["good_lp"], ref["good_lp"])
    assert linear_cka(pruned["reps"][1], ref["reps"][1]) < 0.999
    rtn8 = compressed(inputs, {"scheme": "rtn8"}, 0)
    rtn2 = compressed(inputs, {"scheme": "rtn2"}, 0)
    assert rtn8["weight_error"] < rtn2["weight_error"]
    assert np.abs(rtn8["reps"] - ref["reps"]).max() < np.abs(rtn2["reps"] - ref["reps"]).max()
    with pytest.raises(ValueError):
        compressed(inputs, {"scheme": "full"}, 0)


def test_readout_pooling_ignores_padding(tiny: str) -> None:
    from methods.brain_compression.compress import _base, read_out

    model = _base(tiny)
    seqs = [[0, 5, 6, 7], [0, 5, 6, 7, 8, 9, 10]]
    lp_batch, count, reps_batch = read_out(model, seqs, [2], batch=2)
    lp_one, _, reps_one = read_out(model, seqs[:1], [2], batch=1)
    assert count.tolist() == [3.0, 6.0]
    assert lp_batch[0] == pytest.approx(lp_one[0], abs=1e-4)
    assert np.allclose(reps_batch[0, 0], reps_one[0, 0], atol=1e-4)
    assert Path(tiny).is_dir()
