"""MedREK's oracle-injection scores: batched scoring equals one unpadded forward per probe."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from harness.editors import get
from methods.editors.medrek_budget import injection_scores

RECORDS = [
    ("What is the capital of France?", "Which city is France's capital?",
     "What colour is the sky?", "Lyon", "Blue"),
    ("Which drug treats angina?", "What medicine is given for angina?",
     "How many legs does a spider have?", "Aspirin", "Eight"),
    ("Which organ makes insulin?", "What organ produces insulin?",
     "What is frozen water called?", "Liver", "Ice"),
]


class _Tok:
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


def _direct(model: Any, tok: Any, modules: Any, enc: Any) -> list[dict[str, float]]:
    """The same three scores, one unpadded forward per probe (the reference)."""
    import torch

    from methods.editors.medrek_train import forced, sentence

    feats = torch.from_numpy(enc.encode([sentence(r[0], r[3]) for r in RECORDS]))
    out = []
    with torch.inference_mode():
        soft = modules(feats)
        for i, r in enumerate(RECORDS):
            scores = {}
            for name, (prompt, answer) in {"efficacy": (r[0], r[3]),
                                           "generality": (r[1], r[3]),
                                           "locality": (r[2], r[4])}.items():
                x, y, m = forced(tok, prompt, answer)
                emb = model.get_input_embeddings()(torch.tensor([x]))
                post = model(inputs_embeds=torch.cat([soft[i:i + 1], emb], 1)
                             ).logits[0, soft.shape[1]:].argmax(-1).tolist()
                ref = y if name != "locality" else \
                    model(torch.tensor([x])).logits[0].argmax(-1).tolist()
                kept = [(p, t) for p, t, k in zip(post, ref, m, strict=True) if k]
                scores[name] = sum(p == t for p, t in kept) / len(kept)
            out.append(scores)
    return out


def test_injection_scores_equal_one_unpadded_forward_per_probe(confident_llama: Any) -> None:
    import torch

    from methods.editors.medrek_train import PromptModules

    torch.manual_seed(3)
    modules = PromptModules(48, 32, n_tokens=3)
    enc = _Encoder()
    modules.calibrate(torch.from_numpy(enc.encode(["a b", "c d"])), target_rms=1.0)
    batched = injection_scores(confident_llama, _Tok(), modules, enc, RECORDS, bf16=False)
    direct = _direct(confident_llama, _Tok(), modules, enc)
    assert len(batched) == len(RECORDS)
    for got, want in zip(batched, direct, strict=True):
        assert got == pytest.approx(want)
    # the soft prompt moves the locality prompt's argmax somewhere (this model is sensitive)
    assert min(r["locality"] for r in batched) < 1.0


def test_the_registered_editor_reaches_the_budget_curve(confident_llama: Any,
                                                        tmp_path: Any,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALSUITE_CACHE", str(tmp_path))
    points: list[int] = []
    medrek = get("editor", "medrek").load()
    report = medrek.budget_curve(
        confident_llama, _Tok(), RECORDS, {"fit": RECORDS}, [0, 2, 99],
        {"steps": 3, "batch_size": 2, "lr": 0.01, "seed": 0, "bf16": False},
        lambda done, scores: points.append(done) or None, encoder=_Encoder())
    assert points == [0, 2]  # checkpoints beyond the run's steps are not reached
    assert report["steps"] == 3 and report["config"]["steps"] == 3
    assert len(list((tmp_path / "medrek").glob("*.pt"))) == 1  # step 2 stored; 0 is untrained
