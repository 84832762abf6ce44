"""MedREK as published, in small: T = 3 attention soft prompts trained through a frozen model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.plugins.editor import Edit, make_editor
from methods.editors.retrieval import Projection, Retriever
from methods.medversa.medrek import MedREKEditor
from methods.medversa.medrek_train import (
    PromptModules,
    TrainConfig,
    cache_key,
    hinge_label_loss,
    kl_loss,
    train_modules,
    trained_modules,
    weights_digest,
)

RECORDS = [
    ("What is the capital of France?", "Which city is France's capital?",
     "What colour is the sky?", "Lyon", "Blue"),
    ("Which drug treats angina?", "What medicine is given for angina?",
     "How many legs does a spider have?", "Aspirin", "Eight"),
    ("Which organ makes insulin?", "What organ produces insulin?",
     "What is frozen water called?", "Liver", "Ice"),
]


def test_prompt_modules_give_t_identical_tokens_at_the_embedding_scale() -> None:
    import torch

    torch.manual_seed(0)
    mod = PromptModules(feat_dim=16, hidden=32, n_tokens=3)
    feats = torch.randn(5, 16)
    mod.calibrate(feats, target_rms=0.02)
    out = mod(feats)
    assert out.shape == (5, 3, 32)
    # one key/value: the attention weights are all 1, so the T outputs coincide (spec §4.3)
    torch.testing.assert_close(out[:, 0], out[:, 2])
    assert float(out.detach().pow(2).mean().sqrt()) == pytest.approx(0.02, rel=1e-4)


def test_hinge_loss_skips_confident_positions_and_kl_is_zero_for_equal_logits() -> None:
    import torch

    logits = torch.tensor([[5.0, 0.0, 0.0], [0.0, 0.1, 0.0]])
    labels = torch.tensor([0, 0])
    # row 0 is confident (p >> 1.2 x second): only row 1 contributes
    expected = -torch.log_softmax(logits[1], dim=0)[0]
    torch.testing.assert_close(hinge_label_loss(logits, labels), expected)
    assert float(kl_loss(logits, logits)) == pytest.approx(0.0, abs=1e-6)
    assert float(kl_loss(logits, logits.flip(1))) > 0


def _edit_accuracy(model: Any, tok: Any, enc: Any, modules: PromptModules) -> float:
    """Teacher-forced accuracy on the train edits (prompt and paraphrase) with each record's
    own soft prompt in front."""
    import numpy as np
    import torch

    from methods.medversa.medrek_train import forced, sentence

    feats = torch.from_numpy(np.asarray(enc.encode([sentence(r[0], r[3]) for r in RECORDS]),
                                        dtype=np.float32))
    hits = total = 0
    with torch.inference_mode():
        soft = modules(feats)
        for i, r in enumerate(RECORDS):
            for prompt in (r[0], r[1]):
                x, y, m = forced(tok, prompt, r[3])
                emb = model.get_input_embeddings()(torch.tensor([x]))
                logits = model(inputs_embeds=torch.cat([soft[i:i + 1], emb], 1)).logits[0, 3:]
                pred = logits.argmax(-1).tolist()
                hits += sum(int(p == t) for p, t, k in zip(pred, y, m, strict=True) if k)
                total += sum(m)
    return hits / total


def test_training_raises_edit_accuracy_and_leaves_the_model_frozen(
        confident_llama: Any, char_tokenizer: Any, hash_encoder: Any) -> None:
    import torch

    model = confident_llama
    before = [p.detach().clone() for p in model.parameters()]
    flags = [p.requires_grad for p in model.parameters()]
    init, _ = train_modules(model, char_tokenizer, RECORDS, hash_encoder,
                            TrainConfig(steps=0, seed=0, bf16=False))
    cfg = TrainConfig(steps=60, batch_size=3, lr=1e-2, seed=0, bf16=False)
    modules, report = train_modules(model, char_tokenizer, RECORDS, hash_encoder, cfg)
    first = sum(r["rel"] + r["gen"] for r in report.losses[:5]) / 5
    last = sum(r["rel"] + r["gen"] for r in report.losses[-5:]) / 5
    assert last < first - 2.0  # the edit losses fall (measured: 16.6 -> 9.4 over 60 steps)
    acc0 = _edit_accuracy(model, char_tokenizer, hash_encoder, init)
    acc1 = _edit_accuracy(model, char_tokenizer, hash_encoder, modules)
    assert acc1 > acc0 + 0.1  # the soft prompts push the edit targets (0.0 -> 0.21)
    for p, q in zip(model.parameters(), before, strict=True):
        torch.testing.assert_close(p, q)
    assert [p.requires_grad for p in model.parameters()] == flags
    assert report.cpu_seconds > 0 and len(report.losses) == 60


def test_trained_modules_are_cached_by_content(tiny_llama: Any, char_tokenizer: Any,
                                               hash_encoder: Any, tmp_path: Path) -> None:
    import torch

    cfg = TrainConfig(steps=2, batch_size=2, seed=0, bf16=False)
    a, rep_a = trained_modules(tiny_llama, char_tokenizer, RECORDS, hash_encoder, cfg,
                               folder=tmp_path)
    b, rep_b = trained_modules(tiny_llama, char_tokenizer, RECORDS, hash_encoder, cfg,
                               folder=tmp_path)
    assert not rep_a.cached and rep_b.cached and rep_a.key == rep_b.key
    # the digest names the weights themselves; the platform says what trained them
    assert rep_a.weights_digest == rep_b.weights_digest == weights_digest(b)
    assert len(rep_a.weights_digest) == 16 and rep_b.platform == rep_a.platform != ""
    other_seed, _ = train_modules(tiny_llama, char_tokenizer, RECORDS, hash_encoder,
                                  TrainConfig(steps=2, batch_size=2, seed=1, bf16=False))
    assert weights_digest(other_seed) != rep_a.weights_digest
    for (k, v), (_, w) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        torch.testing.assert_close(v, w, msg=k)
    assert len(list(tmp_path.glob("*.pt"))) == 1
    other = cache_key(tiny_llama, RECORDS[:2], cfg, "minilm-l6")
    assert other != rep_a.key
    assert cache_key(tiny_llama, RECORDS, TrainConfig(steps=3, batch_size=2, seed=0,
                                                      bf16=False), "minilm-l6") != rep_a.key


def test_medrek_editor_prepends_three_trained_soft_tokens(
        tiny_llama: Any, char_tokenizer: Any, hash_encoder: Any) -> None:
    import torch

    cfg = TrainConfig(steps=2, batch_size=2, seed=0, bf16=False)
    modules, _ = train_modules(tiny_llama, char_tokenizer, RECORDS, hash_encoder, cfg)
    ed = MedREKEditor(tiny_llama, char_tokenizer, modules,
                      retriever=Retriever(hash_encoder, Projection.identity(384, 0.4)),
                      feature_encoder=hash_encoder)
    ed.apply([Edit(r[0], r[3]) for r in RECORDS])
    query = RECORDS[1][0]
    ids = torch.tensor([char_tokenizer(query).input_ids])
    with torch.inference_mode():
        plain = tiny_llama(input_ids=ids).logits
        with ed.hooks(tiny_llama, query) as n_soft:
            hooked = tiny_llama(input_ids=ids).logits
        soft = ed.soft_prompt_for(query)
        manual = tiny_llama(inputs_embeds=torch.cat(
            [soft[None], tiny_llama.get_input_embeddings()(ids)], dim=1)).logits[:, 3:]
    assert n_soft == 3 and soft.shape == (3, 32)
    assert hooked.shape == plain.shape and not torch.allclose(hooked, plain)
    torch.testing.assert_close(hooked, manual)
    assert ed.hook_keys([query])[0] == ("medrek", id(modules), Edit(RECORDS[1][0],
                                                                     RECORDS[1][3]))
    assert ed.soft_prompt_for("Zebra stripes count") is None


def test_medrek_needs_five_field_train_records(tiny_llama: Any, char_tokenizer: Any) -> None:
    with pytest.raises(ValueError, match="5-field"):
        make_editor("medrek", tiny_llama, char_tokenizer, train=[r[:3] for r in RECORDS])
    with pytest.raises(ValueError, match="train split"):
        make_editor("medrek", tiny_llama, char_tokenizer, train=[])


def test_the_training_budget_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from methods.medversa.medrek import STEPS_ENV, train_config

    monkeypatch.delenv(STEPS_ENV, raising=False)
    assert train_config() == TrainConfig()
    monkeypatch.setenv(STEPS_ENV, "400")
    assert train_config() == TrainConfig(steps=400)
    for bad in ("many", "-1"):
        monkeypatch.setenv(STEPS_ENV, bad)
        with pytest.raises(ValueError, match=STEPS_ENV):
            train_config()


def test_bf16_autocast_is_on_by_default_only_where_the_cpu_has_bf16(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Emulated bf16 on an AVX2-only CPU made a MedREK step ~80x slower than float32."""
    from methods.medversa import medrek_train

    monkeypatch.setattr(medrek_train, "cpu_flags", lambda: {"avx2", "avx512f"})
    assert medrek_train.TrainConfig().bf16 is False
    monkeypatch.setattr(medrek_train, "cpu_flags", lambda: {"avx2", "amx_bf16"})
    assert medrek_train.TrainConfig().bf16 is True
    assert medrek_train.TrainConfig(bf16=False).bf16 is False  # an explicit choice stands
