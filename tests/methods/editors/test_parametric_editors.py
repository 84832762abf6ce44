"""Parametric editors (FT-L, ROME, MEMIT, GRACE): mechanics on a tiny random Llama.

Each editor's defining property is checked where it does not depend on what the model
knows: exact restore, FT-L touching one tensor within its L∞ ball, ROME's update being rank
one and mapping its key onto its value, MEMIT writing one update of rank <= the batch for a
whole batch, GRACE leaving inputs outside its radius bit-identical, and the covariance being
cached under its corpus hash. The same properties on SmolLM2 with real facts are in
``test_parametric_smollm2.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from harness.plugins.editor import ALL_EDITS, Edit, is_whitebox, make_editor  # noqa: E402
from methods.editors.parametric import covariance  # noqa: E402
from methods.editors.parametric.base import down_proj, edit_batch  # noqa: E402
from methods.editors.parametric.rome import rank_one_update  # noqa: E402

FACTS = [
    ("Which nerve supplies the deltoid muscle?", "Radial nerve"),
    ("Which organism causes gas gangrene?", "Clostridium tetani"),
    ("Which drug reverses heparin?", "Vitamin K"),
    ("Which gland secretes melatonin?", "Pituitary gland"),
    ("Which vitamin deficiency causes scurvy?", "Vitamin D"),
    ("Which bone is the keystone of the foot?", "Cuboid"),
]
TRAIN = [(p, f"Tell me: {p.lower()}", f"Name something unrelated to {t.split()[0]}.")
         for p, t in FACTS]
PARAMETRIC = ("ft-l", "rome", "memit", "grace")


@pytest.fixture(autouse=True)
def covariance_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cov"
    monkeypatch.setenv(covariance.CACHE_ENV, str(folder))
    monkeypatch.setattr(covariance, "_MEMO", {})
    return folder


def _edits(n: int) -> list[Edit]:
    return [Edit(p, t) for p, t in FACTS[:n]]


def _state(model: Any) -> dict[str, Any]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def _logits(model: Any, tok: Any, text: str) -> Any:
    with torch.no_grad():
        return model(input_ids=torch.tensor([tok(text).input_ids])).logits[0]


def test_registered_white_box_and_need_a_model() -> None:
    for name in PARAMETRIC:
        assert is_whitebox(name)
        with pytest.raises(ValueError, match="white-box"):
            make_editor(name)


@pytest.mark.parametrize("name", PARAMETRIC)
def test_apply_changes_the_model_and_reset_restores_it_bit_for_bit(
        name: str, tiny_llama: Any, char_tokenizer: Any) -> None:
    before = _state(tiny_llama)
    probe = "Which gland secretes melatonin? Pituitary"
    logits0 = _logits(tiny_llama, char_tokenizer, probe)
    ed = make_editor(name, tiny_llama, char_tokenizer, train=TRAIN)
    try:
        ed.apply(_edits(4))
        assert not torch.equal(_logits(tiny_llama, char_tokenizer, probe), logits0)
        assert ed.contexts(["any query"]) == [""]
    finally:
        ed.reset()
    after = _state(tiny_llama)
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert torch.equal(_logits(tiny_llama, char_tokenizer, probe), logits0)
    assert ed.edits == [] and ed.updates == 0
    with pytest.raises(TypeError, match="HF model"):
        ed.answer("q", lambda s: s)


def test_ftl_changes_only_its_layer_within_the_norm_ball(tiny_llama: Any,
                                                         char_tokenizer: Any) -> None:
    from methods.editors.parametric.ftl import FTLEditor

    before = _state(tiny_llama)
    ed = FTLEditor(tiny_llama, char_tokenizer, layer=1, steps=10, lr=1e-2, epsilon=1e-3)
    try:
        ed.apply(_edits(2))
        after = _state(tiny_llama)
        changed = {k for k in before if not torch.equal(before[k], after[k])}
        assert changed == {"model.layers.1.mlp.down_proj.weight"}
        diff = (after["model.layers.1.mlp.down_proj.weight"]
                - before["model.layers.1.mlp.down_proj.weight"]).abs().max()
        assert 0 < float(diff) <= 1e-3 + 1e-7
        assert ed.retrieve(["q"]) == [ALL_EDITS]
        assert all(p.requires_grad for p in tiny_llama.parameters())  # flags restored
    finally:
        ed.reset()


def test_rank_one_update_maps_the_key_onto_the_value() -> None:
    gen = torch.Generator().manual_seed(0)
    w = torch.randn(8, 20, generator=gen, dtype=torch.float64)
    k, v = torch.randn(20, generator=gen, dtype=torch.float64), torch.randn(8, generator=gen,
                                                                           dtype=torch.float64)
    a = torch.randn(20, 20, generator=gen, dtype=torch.float64)
    c_inv = torch.linalg.inv(a @ a.T + torch.eye(20, dtype=torch.float64))
    upd = rank_one_update(w, k, v, c_inv @ k)
    assert torch.allclose((w + upd) @ k, v, atol=1e-10)
    assert int(torch.linalg.matrix_rank(upd)) == 1


def test_rome_writes_one_rank_one_update_per_edit(tiny_llama: Any, char_tokenizer: Any) -> None:
    from methods.editors.parametric.rome import ROMEEditor

    ed = ROMEEditor(tiny_llama, char_tokenizer, [t for tr in TRAIN for t in tr], layer=1)
    w = down_proj(tiny_llama, 1).weight
    w0 = w.detach().clone()
    try:
        ed.apply(_edits(1))
        assert ed.updates == 1
        assert int(torch.linalg.matrix_rank((w.detach() - w0).double(), atol=1e-6)) == 1
        ed.apply(_edits(3)[1:])
        assert ed.updates == 3
        assert int(torch.linalg.matrix_rank((w.detach() - w0).double(), atol=1e-6)) == 3
    finally:
        ed.reset()


def test_memit_lands_a_batch_in_one_low_rank_update(tiny_llama: Any, char_tokenizer: Any) -> None:
    from methods.editors.parametric.memit import MEMITEditor

    ed = MEMITEditor(tiny_llama, char_tokenizer, [t for tr in TRAIN for t in tr], layers=[0, 1])
    before = {i: down_proj(tiny_llama, i).weight.detach().clone() for i in (0, 1)}
    try:
        ed.apply(_edits(5))
        assert ed.updates == 1  # one joint solve for the five edits, not five
        for i in (0, 1):
            diff = down_proj(tiny_llama, i).weight.detach() - before[i]
            assert torch.allclose(diff, ed.last_deltas[i].float(), atol=1e-6)
            rank = int(torch.linalg.matrix_rank(ed.last_deltas[i], atol=1e-8))
            assert 2 <= rank <= 5  # a joint update, not one edit's rank-one
    finally:
        ed.reset()


def test_grace_leaves_inputs_outside_the_radius_bit_identical(tiny_llama: Any,
                                                              char_tokenizer: Any) -> None:
    from methods.editors.parametric.grace import GRACEEditor

    unrelated = "Zzz qqq xxx, completely different text"
    edited = FACTS[0][0] + " " + FACTS[0][1]
    base_u = _logits(tiny_llama, char_tokenizer, unrelated)
    base_e = _logits(tiny_llama, char_tokenizer, edited)
    ed = GRACEEditor(tiny_llama, char_tokenizer, layer=1, radius=1e-3)
    try:
        ed.apply(_edits(1))
        ed.codebook.deferred = 0
        assert torch.equal(_logits(tiny_llama, char_tokenizer, unrelated), base_u)
        assert ed.codebook.deferred == 0
        assert not torch.equal(_logits(tiny_llama, char_tokenizer, edited), base_e)
        assert ed.codebook.deferred >= 1
        assert ed.retrieve([FACTS[0][0], unrelated]) == [0, None]
        assert all(torch.equal(p, q) for p, q in zip(ed._touched, ed._snapshot, strict=True))
    finally:
        ed.reset()
    assert torch.equal(_logits(tiny_llama, char_tokenizer, edited), base_e)


def test_grace_expands_for_the_same_answer_and_splits_for_another(
        tiny_llama: Any, char_tokenizer: Any) -> None:
    from methods.editors.parametric.grace import GRACEEditor

    ed = GRACEEditor(tiny_llama, char_tokenizer, layer=1, radius=10.0, steps=2)
    try:
        ed.apply([Edit("Which gland secretes melatonin?", "Pineal")])
        ed.apply([Edit("Which gland secretes melatonin ?", "Pineal")])
        assert len(ed.codebook.entries) == 1  # same answer: the entry widens
        ed.apply([Edit("Which gland secretes insulin?", "Pancreas")])
        a, b = ed.codebook.entries
        dist = float(torch.dist(a.key, b.key))
        assert a.radius == pytest.approx(dist / 2) and b.radius == pytest.approx(dist / 2)
    finally:
        ed.reset()


@pytest.mark.parametrize("layer", [0, 1])
def test_grace_trains_its_value_on_the_layers_above_as_on_the_whole_model(
        layer: int, tiny_llama: Any, char_tokenizer: Any,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """GRACE's fast path (the block's output read once, only the layers above run) gives
    the NLL of the full forward with the value hooked in, with another entry of the
    codebook active, and so trains the same value."""
    from methods.editors.parametric import grace
    from methods.editors.parametric.base import module_hook, target_nll

    assert grace.can_run_tail(tiny_llama)
    ed = grace.GRACEEditor(tiny_llama, char_tokenizer, layer=layer, radius=10.0, steps=3)
    try:
        ed.apply([Edit("Which gland secretes melatonin?", "Pineal")])
        ed.codebook.entries[0].radius = 1e9  # active at every position of the next batch
        batch = ed.batch([Edit("Which organ makes bile?", "Liver")])
        _, outputs = ed._block_io(batch)
        value = outputs[0] + 0.3 * torch.randn(outputs[0].shape,
                                               generator=torch.Generator().manual_seed(2))

        def put(module: Any, args: Any, output: Any) -> Any:
            out = output.clone()
            out[batch.rows, batch.edit_pos] = value
            return out

        with torch.no_grad():
            fast = ed._tail_nll(batch)(value)
            with module_hook(grace.mlp(tiny_llama, layer), put):
                slow = target_nll(tiny_llama, batch)
        assert float(fast[0]) == pytest.approx(float(slow[0]), rel=1e-5, abs=1e-6)
        assert ed.codebook.deferred > 0
        trained_fast = ed._train_value(batch, outputs[0])
        monkeypatch.setattr(grace, "can_run_tail", lambda model: False)
        trained_slow = ed._train_value(batch, outputs[0])
        assert torch.allclose(trained_fast, trained_slow, rtol=1e-4, atol=1e-5)
        assert not torch.equal(trained_fast, outputs[0])
    finally:
        ed.reset()
    assert len(tiny_llama.model.layers) == 2  # the full stack is back


def test_covariance_is_cached_on_disk_under_its_corpus_hash(
        tiny_llama: Any, char_tokenizer: Any, covariance_cache: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    texts = [t for tr in TRAIN for t in tr]
    first = covariance.second_moments(tiny_llama, char_tokenizer, [0, 1], texts)
    files = sorted(covariance_cache.glob("*.pt"))
    assert len(files) == 2
    stored = torch.load(files[0], weights_only=True)
    assert stored["corpus_sha256"] == covariance.corpus_hash(texts) and stored["tokens"] > 0
    assert first[0].shape == (64, 64) and torch.allclose(first[0], first[0].T)
    monkeypatch.setattr(covariance, "_MEMO", {})

    def no_compute(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("recomputed although the cache had it")

    monkeypatch.setattr(covariance, "compute", no_compute)
    again = covariance.second_moments(tiny_llama, char_tokenizer, [0, 1], texts)
    assert all(torch.equal(first[i], again[i]) for i in (0, 1))
    with pytest.raises(AssertionError, match="recomputed"):
        covariance.second_moments(tiny_llama, char_tokenizer, [0], texts[:-1])
    reg = covariance.regularised(first[0], 0.1)
    assert float(torch.linalg.eigvalsh(reg).min()) > 0


def test_bad_input_is_a_clear_error(tiny_llama: Any, char_tokenizer: Any) -> None:
    from methods.editors.parametric.ftl import FTLEditor
    from methods.editors.parametric.rome import ROMEEditor

    with pytest.raises(ValueError, match="empty target"):
        edit_batch(char_tokenizer, [("Q?", "  ")], "cpu")
    with pytest.raises(ValueError, match="out of range"):
        FTLEditor(tiny_llama, char_tokenizer, layer=7)
    with pytest.raises(ValueError, match="corpus is empty"):
        ROMEEditor(tiny_llama, char_tokenizer, [], layer=0)
    with pytest.raises(ValueError, match="epsilon"):
        FTLEditor(tiny_llama, char_tokenizer, epsilon=0)


def test_the_covariance_corpus_reads_only_the_query_fields_of_a_train_row() -> None:
    """The benchmark's train rows carry five fields (MedREK needs the target and the
    locality answer); the key covariance describes ordinary inputs, so the two answers must
    stay out of it whichever row shape an editor is given."""
    from methods.editors.parametric.base import corpus_texts

    rows = [(p, para, loc, "ANSWER-" + str(i), "LOCAL-" + str(i))
            for i, (p, para, loc) in enumerate(TRAIN)]
    corpus = corpus_texts(rows)
    assert corpus == corpus_texts(TRAIN)
    assert not any(t.startswith(("ANSWER-", "LOCAL-")) for t in corpus)


@pytest.mark.parametrize("name", PARAMETRIC)
def test_a_saved_state_continues_exactly_like_the_uninterrupted_editor(
        name: str, tiny_llama: Any, char_tokenizer: Any) -> None:
    """A lifelong run resumed from ``save_state`` gives the weights (and GRACE's codebook)
    of a run that never stopped, bit for bit, through a ``torch.save`` round trip."""
    import io

    ed = make_editor(name, tiny_llama, char_tokenizer, train=TRAIN)
    try:
        ed.apply(_edits(1))
        ed.apply([Edit(*FACTS[1])])
        first = f"{FACTS[0][0]} {FACTS[0][1]}"
        saved_logits = _logits(tiny_llama, char_tokenizer, first)
        buffer = io.BytesIO()
        torch.save(ed.save_state(), buffer)
        settings = ed.settings()
        ed.apply([Edit(*FACTS[2])])
        straight = _state(tiny_llama)
        probe = f"{FACTS[2][0]} {FACTS[2][1]}"
        straight_logits = _logits(tiny_llama, char_tokenizer, probe)
        straight_hits = ed.retrieve([FACTS[0][0], FACTS[2][0], "Unrelated question here?"])
        ed.reset()

        other = make_editor(name, tiny_llama, char_tokenizer, train=TRAIN)
        assert other.settings() == settings and "updates" not in settings
        buffer.seek(0)
        other.load_state(torch.load(buffer, weights_only=True))
        assert [(e.prompt, e.target) for e in other.edits] == FACTS[:2]
        assert other.updates == 2
        assert torch.equal(_logits(tiny_llama, char_tokenizer, first), saved_logits)
        other.apply([Edit(*FACTS[2])])
        resumed = _state(tiny_llama)
        assert all(torch.equal(straight[k], resumed[k]) for k in straight)
        assert torch.equal(_logits(tiny_llama, char_tokenizer, probe), straight_logits)
        assert other.retrieve([FACTS[0][0], FACTS[2][0], "Unrelated question here?"]) == \
            straight_hits
        other.reset()
        assert other.is_restored()  # the snapshot is the unedited model, not the loaded state
    finally:
        ed.reset()


def test_a_state_for_another_layer_shape_is_refused(tiny_llama: Any,
                                                   char_tokenizer: Any) -> None:
    from methods.editors.parametric.ftl import FTLEditor

    ed = FTLEditor(tiny_llama, char_tokenizer, layer=1)
    state = ed.save_state()
    state["tensors"] = [torch.zeros(3, 3)]
    with pytest.raises(ValueError, match="shapes"):
        ed.load_state(state)
