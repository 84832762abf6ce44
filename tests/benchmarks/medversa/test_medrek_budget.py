"""MedREK's training-budget curve, benchmark side: the checkpoint curve, its CIs and files."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from benchmarks.medversa.medrek_budget import markdown, parse, run


class _Tok:
    """One id per byte (the editor tests' stand-in; their conftest is not visible here)."""

    eos_token_id = 1
    pad_token_id = None

    def __call__(self, text: str, add_special_tokens: bool = True) -> Any:
        return SimpleNamespace(input_ids=[2 + (b % 62) for b in text.encode()])


class _Encoder:
    """Hashed bag of words, unit norm (a stand-in for MiniLM)."""

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), 48), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                out[i, int(hashlib.md5(word.encode()).hexdigest(), 16) % 48] += 1.0
            out[i] /= max(float(np.linalg.norm(out[i])), 1e-9)
        return out


@pytest.fixture(scope="module")
def confident_llama() -> Any:
    """A tiny Llama whose outputs depend on its inputs (large init), so soft prompts move them."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(
        vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
        initializer_range=0.5))
    model.eval()
    return model


@pytest.fixture()
def char_tokenizer() -> _Tok:
    return _Tok()


@pytest.fixture()
def hash_encoder() -> _Encoder:
    return _Encoder()


def test_the_curve_has_every_checkpoint_and_training_raises_fit(
        confident_llama: Any, char_tokenizer: Any, hash_encoder: Any,
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import torch

    import harness.models.whitebox as whitebox
    import methods.editors.retrieval as retrieval
    from benchmarks.medversa.medversa import make_split, train_records
    from methods.medversa.medrek_train import TrainConfig, train_modules, trained_modules

    monkeypatch.setenv("EVALSUITE_CACHE", str(tmp_path / "cache"))
    lm = SimpleNamespace(model=confident_llama, tokenizer=char_tokenizer)
    monkeypatch.setattr(whitebox, "shared_lm", lambda path, device, dtype: (lm, None))
    monkeypatch.setattr(retrieval, "default_encoder", lambda: hash_encoder)
    args = parse(["--data", "sample", "--model", "tiny", "--model-path", "unused",
                  "--dtype", "float32", "--steps", "40", "--checkpoints", "0,10,40",
                  "--batch-size", "4", "--lr", "0.01", "--n", "6", "--n-fit", "6",
                  "--log-every", "0", "--no-bf16", "--out", str(tmp_path / "out")])
    result = run(args)
    assert [p["steps"] for p in result["curve"]] == [0, 10, 40]
    assert result["complete"] and len(result["losses"]) == 40
    fit0, fit1 = (result["curve"][i]["fit"]["efficacy"]["mean"] for i in (0, -1))
    assert fit1 > fit0  # the prompt encoder learns the records it trains on
    point = result["curve"][-1]["held_out"]["generality"]
    assert point["lo"] <= point["mean"] <= point["hi"] and point["n"] == 6
    written = json.loads((tmp_path / "out" / "medrek_budget.json").read_text())
    assert written["split"]["n_fit"] == 6 and set(written["per_record"]) == {"0", "10", "40"}
    table = (tmp_path / "out" / "medrek_budget.md").read_text()
    assert table == markdown(written) and "| 40 |" in table
    # each checkpoint's encoder is cached as a run of that many steps: identical weights
    records = train_records(make_split("sample").train)
    config = TrainConfig(steps=10, batch_size=4, lr=0.01, seed=1, bf16=False)
    cached, report = trained_modules(confident_llama, char_tokenizer, records, hash_encoder, config)
    assert report.cached and report.steps == 10 and len(report.losses) == 10
    fresh, _ = train_modules(confident_llama, char_tokenizer, records, hash_encoder, config)
    for (name, a), (_, b) in zip(cached.state_dict().items(), fresh.state_dict().items(),
                                 strict=True):
        torch.testing.assert_close(a, b, msg=name)
    assert len(list((tmp_path / "cache" / "medrek").glob("*.pt"))) == 2  # steps 10 and 40
