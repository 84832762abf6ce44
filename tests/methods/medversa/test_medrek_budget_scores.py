"""MedREK's oracle-injection scores: batched scoring equals one unpadded forward per probe."""

from __future__ import annotations

from typing import Any

import pytest

from harness.plugins.editor import get
from methods.medversa.medrek_budget import injection_scores

RECORDS = [  # (edit prompt, paraphrase, locality prompt, new target, locality answer)
    ("Which vitamin prevents scurvy?", "Scurvy is prevented by which vitamin?",
     "How many days are in a week?", "Vitamin D", "Seven"),
    ("Which bone is the longest?", "What is the longest bone in the body?",
     "What colour is grass?", "Humerus", "Green"),
]

def _direct(model: Any, tok: Any, modules: Any, enc: Any) -> list[dict[str, float]]:
    """The same three scores, one unpadded forward per probe (the reference)."""
    import torch

    from methods.medversa.medrek_train import forced, sentence

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


def test_injection_scores_equal_one_unpadded_forward_per_probe(
        confident_llama: Any, char_tokenizer: Any, hash_encoder: Any) -> None:
    import torch

    from methods.medversa.medrek_train import PromptModules

    torch.manual_seed(3)
    modules = PromptModules(hash_encoder.dim, 32, n_tokens=3)
    enc = hash_encoder
    modules.calibrate(torch.from_numpy(enc.encode(["a b", "c d"])), target_rms=1.0)
    batched = injection_scores(confident_llama, char_tokenizer, modules, enc, RECORDS, bf16=False)
    direct = _direct(confident_llama, char_tokenizer, modules, enc)
    assert len(batched) == len(RECORDS)
    for got, want in zip(batched, direct, strict=True):
        assert got == pytest.approx(want)
    # the soft prompt moves the locality prompt's argmax somewhere (this model is sensitive)
    assert min(r["locality"] for r in batched) < 1.0


def test_the_registered_editor_reaches_the_budget_curve(
        confident_llama: Any, char_tokenizer: Any, hash_encoder: Any, tmp_path: Any,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALSUITE_CACHE", str(tmp_path))
    points: list[int] = []

    def record(done: int, scores: object) -> None:
        points.append(done)

    medrek = get("editor", "medrek").load()
    report = medrek.budget_curve(
        confident_llama, char_tokenizer, RECORDS, {"fit": RECORDS}, [0, 2, 99],
        {"steps": 3, "batch_size": 2, "lr": 0.01, "seed": 0, "bf16": False},
        record, encoder=hash_encoder)
    assert points == [0, 2]  # checkpoints beyond the run's steps are not reached
    assert report["steps"] == 3 and report["config"]["steps"] == 3
    assert len(list((tmp_path / "medrek").glob("*.pt"))) == 1  # step 2 stored; 0 is untrained
