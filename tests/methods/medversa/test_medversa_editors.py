"""Editors: the shared interface, IKE/none behaviour, retrieval training and soft-prompt hooks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from harness.plugins.editor import ALL_EDITS, Edit, make_editor
from methods.editors.retrieval import (
    Projection,
    RetrievalEditor,
    Retriever,
    TrainTriple,
    train_projection,
)
from methods.medversa.medrek import SoftPromptEditor

FACTS = [
    ("Which nerve supplies the deltoid muscle?", "Radial nerve",
     "The deltoid muscle is innervated by which nerve?", "Which bone forms the cheek?"),
    ("Which organism causes gas gangrene?", "Clostridium tetani",
     "Gas gangrene is caused by which organism?", "Name the virus behind mononucleosis."),
    ("Which drug reverses heparin?", "Vitamin K",
     "Heparin overdose is reversed by which drug?", "What is the antidote for paracetamol?"),
    ("Which gland secretes melatonin?", "Pituitary gland",
     "Melatonin is released by which gland?", "Which sleep stage has dreaming?"),
]


def _edits() -> list[Edit]:
    return [Edit(p, t) for p, t, _, _ in FACTS]


def test_edit_sentence_has_single_space() -> None:
    assert Edit("Q? ", " A").sentence() == "Q? A"


def test_none_ignores_edits_and_ike_uses_all() -> None:
    none, ike = make_editor("none"), make_editor("ike")
    for ed in (none, ike):
        ed.apply(_edits())
    assert none.retrieve(["anything"]) == [None] and none.context("anything") == ""
    assert ike.retrieve(["anything"]) == [ALL_EDITS]
    ctx = ike.context("anything")
    assert all(e.sentence() in ctx for e in _edits()) and ctx.count("\n") == len(FACTS)
    ike.reset()
    assert ike.edits == [] and ike.context("anything") == ""


def test_unknown_editor_and_medrek_without_model_are_errors() -> None:
    with pytest.raises(ValueError, match="unknown editor .*registered: .*ike"):
        make_editor("no-such-editor")
    with pytest.raises(ValueError, match="white-box"):
        make_editor("medrek")


def _triples() -> list[TrainTriple]:
    from environments.medversa import load_dataset

    return [TrainTriple(c.prompt, c.rephrase_prompt, c.locality[0].prompt)
            for c in load_dataset("sample")]


def test_training_lowers_false_retrievals_against_untrained_prototype(hash_encoder: Any) -> None:
    triples = _triples()
    proj = train_projection(triples, hash_encoder, steps=60, seed=3)
    assert proj.delta.shape == (384, 384) and np.isfinite(proj.delta).all()
    weak = Projection.identity(384, threshold=0.0)  # accepts every top-1: no gate at all
    rates = []
    for projection in (weak, proj):
        r = Retriever(hash_encoder, projection)
        r.add([t.prompt for t in triples])
        hits = r.search([t.locality for t in triples])
        rates.append(np.mean([h is not None for h in hits]))
        own = r.search([t.prompt for t in triples])
        assert np.mean([h == i for i, h in enumerate(own)]) >= 0.9
    assert rates[0] == 1.0
    assert rates[1] < 0.5


def test_retrieval_editor_injects_only_the_retrieved_edit(hash_encoder: Any) -> None:
    r = Retriever(hash_encoder, Projection.identity(384, threshold=0.4))
    ed = RetrievalEditor(r)
    ed.apply(_edits())
    hits = ed.retrieve([f[2] for f in FACTS] + [f[3] for f in FACTS])
    assert hits[:4] == [0, 1, 2, 3]
    assert hits[4:] == [None] * 4
    assert ed.context(FACTS[1][2]) == _edits()[1].sentence() + "\n"
    ed.reset()
    assert ed.retrieve([FACTS[1][2]]) == [None] and len(r.keys) == 0


def test_sequential_apply_equals_batch_apply(hash_encoder: Any) -> None:
    a = RetrievalEditor(Retriever(hash_encoder, Projection.identity(384, 0.4)))
    b = RetrievalEditor(Retriever(hash_encoder, Projection.identity(384, 0.4)))
    a.apply(_edits())
    for e in _edits():
        b.apply([e])
    queries = [f[2] for f in FACTS]
    assert a.retrieve(queries) == b.retrieve(queries)


def test_projection_round_trips_through_npz(tmp_path: Any, hash_encoder: Any) -> None:
    proj = train_projection(_triples()[:10], hash_encoder, steps=5)
    path = tmp_path / "proj.npz"
    proj.save(path)
    back = Projection.load(path)
    np.testing.assert_array_equal(back.delta, proj.delta)
    np.testing.assert_array_equal(back.prototype, proj.prototype)


def _soft_editor(model: Any, tok: Any, enc: Any) -> SoftPromptEditor:
    ed = SoftPromptEditor(model, tok, Retriever(enc, Projection.identity(384, 0.4)))
    ed.apply(_edits())
    return ed


def test_soft_prompt_hooks_prepend_embeddings_and_drop_their_logits(
        tiny_llama: Any, char_tokenizer: Any, hash_encoder: Any) -> None:
    import torch

    ed = _soft_editor(tiny_llama, char_tokenizer, hash_encoder)
    query = FACTS[2][2]
    ids = torch.tensor([char_tokenizer(query).input_ids])
    with torch.inference_mode():
        plain = tiny_llama(input_ids=ids).logits
        with ed.hooks(tiny_llama, query) as n_soft:
            hooked = tiny_llama(input_ids=ids).logits
        soft = ed.soft_prompts[2]
        manual = tiny_llama(inputs_embeds=torch.cat(
            [soft[None], tiny_llama.get_input_embeddings()(ids)], dim=1)).logits[:, n_soft:]
        after = tiny_llama(input_ids=ids).logits
    assert n_soft == len(char_tokenizer(_edits()[2].sentence() + "\n").input_ids)
    assert hooked.shape == plain.shape
    assert not torch.allclose(hooked, plain)
    torch.testing.assert_close(hooked, manual)
    torch.testing.assert_close(after, plain)  # hooks are gone after the block


def test_soft_prompt_hooks_do_nothing_for_unrelated_queries(
        tiny_llama: Any, char_tokenizer: Any, hash_encoder: Any) -> None:
    import torch

    ed = _soft_editor(tiny_llama, char_tokenizer, hash_encoder)
    query = FACTS[0][3]
    ids = torch.tensor([char_tokenizer(query).input_ids])
    with torch.inference_mode():
        plain = tiny_llama(input_ids=ids).logits
        with ed.hooks(tiny_llama, query) as n_soft:
            hooked = tiny_llama(input_ids=ids).logits
    assert n_soft == 0
    torch.testing.assert_close(hooked, plain)
    assert ed.contexts([query, FACTS[0][0]]) == ["", ""]
