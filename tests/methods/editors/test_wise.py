"""WISE: side memories routed by activation, on a tiny random Llama.

What defines WISE and does not depend on what the model knows: the model's own weights are
never written; an edited prompt is routed to the side memory that holds it and its target
becomes likelier there, while the out-of-scope prompt it was trained against stays on the
main memory with bit-identical logits; each shard of ``shard_size`` edits gets its own
memory and its own random mask; the state round-trips through ``torch.save``.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from harness.plugins.editor import ALL_EDITS, Edit, is_whitebox, make_editor  # noqa: E402
from methods.editors.parametric.base import edit_batch, target_nll  # noqa: E402
from methods.editors.parametric.wise import MAIN, SideMemory, WISEEditor  # noqa: E402

UNRELATED = "Name a colour of the sky at noon."
FACTS = [("Which nerve supplies the deltoid muscle?", "Radial nerve"),
         ("Which drug reverses heparin?", "Vitamin K"),
         ("Which bone is the keystone of the foot?", "Cuboid")]


def _wise(model: Any, tok: Any, **kw: Any) -> WISEEditor:
    """WISE with the published defaults on layer 1 of a 2-layer model."""
    return WISEEditor(model, tok, [UNRELATED], layer=1, **kw)


def _nll(model: Any, tok: Any, prompt: str, target: str) -> float:
    with torch.no_grad():
        return float(target_nll(model, edit_batch(tok, [(prompt, target)], "cpu"))[0])


def _logits(model: Any, tok: Any, text: str) -> Any:
    with torch.no_grad():
        return model(input_ids=torch.tensor([tok(text).input_ids])).logits[0]


def test_registered_white_box_and_needs_unrelated_prompts(tiny_llama: Any,
                                                          char_tokenizer: Any) -> None:
    assert is_whitebox("wise")
    with pytest.raises(ValueError, match="white-box"):
        make_editor("wise")
    with pytest.raises(ValueError, match="unrelated prompts"):
        make_editor("wise", tiny_llama, char_tokenizer, train=[])
    built = make_editor("wise", tiny_llama, char_tokenizer,
                        train=[("p", "q", UNRELATED), ("p2", "q2", UNRELATED)])
    assert isinstance(built, WISEEditor) and built.unrelated == [UNRELATED]
    assert built.layer == 1  # 0.85 of 2 layers, kept inside the model


def test_edits_route_to_the_side_memory_and_leave_the_model_untouched(
        confident_llama: Any, char_tokenizer: Any) -> None:
    before = {k: v.clone() for k, v in confident_llama.state_dict().items()}
    prompt, target = FACTS[0]
    unedited_nll = _nll(confident_llama, char_tokenizer, prompt, target)
    unrelated_logits = _logits(confident_llama, char_tokenizer, UNRELATED)
    ed = _wise(confident_llama, char_tokenizer)
    ed.apply([Edit(prompt, target)])
    after = confident_llama.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)  # main memory untouched

    memory = ed.memories[0]
    assert memory.edits == [0]
    acts = ed._acts([prompt, UNRELATED])[0]
    assert float(acts[0]) == pytest.approx(memory.min_act, rel=1e-5)  # its own Δact
    assert float(acts[1]) < ed.act_ratio * memory.min_act  # the margin it was trained on
    assert ed.route([prompt, UNRELATED]) == [0, MAIN]
    assert ed.retrieve([prompt, UNRELATED]) == [ALL_EDITS, None]
    assert ed.hook_keys([prompt, UNRELATED, prompt]) == [0, MAIN, 0]
    with ed.hooks(confident_llama, prompt):
        edited_nll = _nll(confident_llama, char_tokenizer, prompt, target)
    assert edited_nll < 0.9 * unedited_nll  # (SmolLM2, 3 real edits: 3.1-8.9 -> 0.7-1.8)
    with ed.hooks(confident_llama, UNRELATED):
        assert torch.equal(_logits(confident_llama, char_tokenizer, UNRELATED), unrelated_logits)
    # only the masked entries moved, each within the clamp of W
    delta = memory.weight - confident_llama.model.layers[1].mlp.down_proj.weight.detach()
    assert float(delta.abs().max()) <= 1.0 + 1e-6
    assert torch.equal(delta != 0, (delta != 0) & (ed._mask(0) == 1))

    ed.reset()
    assert ed.memories == [] and ed.route([prompt]) == [MAIN] and ed.updates == 0


def test_each_shard_gets_its_own_memory_and_mask(confident_llama: Any,
                                                 char_tokenizer: Any) -> None:
    ed = _wise(confident_llama, char_tokenizer, shard_size=2)
    for prompt, target in FACTS:
        ed.apply([Edit(prompt, target)])
    assert [m.edits for m in ed.memories] == [[0, 1], [2]]
    assert not torch.equal(ed._mask(0), ed._mask(1))
    assert abs(float(ed._mask(0).mean()) - ed.mask_ratio) < 0.1
    assert ed.updates == 3
    # the route is the memory with the largest Δact among those above their own threshold
    queries = [p for p, _ in FACTS] + [UNRELATED, "What is the capital of France?"]
    acts = ed._acts(queries).numpy()
    limits = np.array([[m.min_act * ed.act_ratio] for m in ed.memories])
    expected = [int(np.argmax(np.where(a > lim, a, -1))) if (a > lim).any() else MAIN
                for a, lim in zip(acts.T, np.repeat(limits.T, len(queries), axis=0),
                                  strict=True)]
    assert ed.route(queries) == expected
    assert expected[2] != MAIN  # the last edit is above its own shard's threshold
    # a memory that holds no edit (threshold inf) never answers
    ed.memories.append(SideMemory(ed.memories[0].weight.clone()))
    ed._routes.clear()
    assert 2 not in ed.route(queries)


def test_the_state_round_trips_and_continues_exactly(confident_llama: Any,
                                                    char_tokenizer: Any) -> None:
    ed = _wise(confident_llama, char_tokenizer, shard_size=2)
    for prompt, target in FACTS[:2]:
        ed.apply([Edit(prompt, target)])
    buffer = io.BytesIO()
    torch.save(ed.save_state(), buffer)
    ed.apply([Edit(*FACTS[2])])
    straight = [m.weight.clone() for m in ed.memories]
    routes = ed.route([p for p, _ in FACTS] + [UNRELATED])

    other = _wise(confident_llama, char_tokenizer, shard_size=2)
    assert other.settings() == ed.settings()
    buffer.seek(0)
    other.load_state(torch.load(buffer, weights_only=True))
    assert [m.edits for m in other.memories] == [[0, 1]]
    other.apply([Edit(*FACTS[2])])
    assert all(torch.equal(a, b.weight) for a, b in zip(straight, other.memories,
                                                         strict=True))
    assert other.route([p for p, _ in FACTS] + [UNRELATED]) == routes


@pytest.mark.parametrize("layer", [0, 1])
def test_running_only_the_layers_above_gives_the_full_forward(
        layer: int, tiny_llama: Any, char_tokenizer: Any) -> None:
    """The fast training path (the layers below frozen, :func:`layers_from` above) computes
    the NLL and Δact the whole model computes with the projection swapped by a hook."""
    from methods.editors.parametric.base import can_run_tail

    assert can_run_tail(tiny_llama)
    ed = WISEEditor(tiny_llama, char_tokenizer, [UNRELATED], layer=layer)
    batch, lengths = ed._edit_rows(Edit(*FACTS[0]), UNRELATED)
    weight = tiny_llama.model.layers[layer].mlp.down_proj.weight.detach()
    changed = weight + 0.05 * torch.randn(weight.shape, generator=torch.Generator()
                                          .manual_seed(1))
    for w in (weight, changed):
        fast = ed._losses(batch, lengths, w, ed._frozen(batch))
        slow = ed._losses(batch, lengths, w)
        for a, b in zip(fast, slow, strict=True):
            assert float(a) == pytest.approx(float(b), rel=1e-5, abs=1e-6)
    assert len(tiny_llama.model.layers) == 2  # the full stack is back
