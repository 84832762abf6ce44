"""ESamp: the distillers learn and stay independent per row; the reweighting is the formula;
beta = 0 reproduces the plain model's greedy tokens exactly (slow: loads SmolLM2)."""

from __future__ import annotations

import importlib.util
from types import SimpleNamespace
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from harness.models.hooks import RequestState, StepView, resolve_method  # noqa: E402
from methods.models.esamp import Distillers, ESamp  # noqa: E402

HIDDEN, VOCAB = 16, 11


def _fake_lm() -> Any:
    gen = torch.Generator().manual_seed(0)
    head = torch.nn.Linear(HIDDEN, VOCAB, bias=False)
    with torch.no_grad():
        head.weight.copy_(torch.randn(VOCAB, HIDDEN, generator=gen))
    model = SimpleNamespace(
        config=SimpleNamespace(hidden_size=HIDDEN), get_output_embeddings=lambda: head
    )
    return SimpleNamespace(model=model, n_layers=3, device=torch.device("cpu"))


def test_distiller_learns_a_fixed_mapping() -> None:
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(1, 8, HIDDEN, generator=gen)
    target = torch.nn.functional.layer_norm(x @ torch.randn(HIDDEN, HIDDEN, generator=gen),
                                            (HIDDEN,))
    d = Distillers([3], HIDDEN, rank=8, lr=1e-2, device="cpu")
    mask = torch.ones(1, 8)
    d.step(x, target, mask)
    first = d.last_loss[0]
    for _ in range(200):
        d.step(x, target, mask)
    assert d.last_loss[0] < 0.5 * first


def test_rows_do_not_influence_each_other() -> None:
    gen = torch.Generator().manual_seed(2)
    x = torch.randn(2, 4, HIDDEN, generator=gen)
    y = torch.randn(2, 4, HIDDEN, generator=gen)
    alone = Distillers([5], HIDDEN, 8, 1e-2, "cpu")
    pair = Distillers([5, 9], HIDDEN, 8, 1e-2, "cpu")
    for _ in range(5):
        alone.step(x[:1], y[:1], torch.ones(1, 4))
        pair.step(x, y, torch.ones(2, 4))
    for p_alone, p_pair in zip(alone.params, pair.params, strict=True):
        assert torch.allclose(p_alone[0], p_pair[0], atol=1e-6)
    assert not torch.allclose(pair.params[0][0], pair.params[0][1])  # seeds differ


def _view(shallow: Any, deep: Any, logits: Any, keep: Any) -> StepView:
    names = ("model.layers.0.input_layernorm", "model.layers.2.input_layernorm")
    return StepView(1, None, None, {}, dict(zip(names, (shallow, deep), strict=True)), None,
                    logits, keep)


@pytest.mark.parametrize("beta", [0.0, 0.3])
def test_reweighting_is_the_formula_on_kept_tokens(beta: float) -> None:
    lm = _fake_lm()
    states = [RequestState(0, "p", 4)]
    method = ESamp(beta=beta, rank=4)
    method.start(lm, states)
    gen = torch.Generator().manual_seed(3)
    shallow, deep = torch.randn(1, 1, HIDDEN, generator=gen), torch.randn(1, 1, HIDDEN)
    logits = torch.randn(1, VOCAB, generator=gen)
    keep = torch.ones(1, VOCAB, dtype=torch.bool)
    keep[0, :3] = False
    with torch.no_grad():
        predicted = lm.model.get_output_embeddings()(method._distillers(shallow))[:, -1]
    out = method.process_logits(lm, logits, _view(shallow, deep, logits, keep), states)
    expected = (1 + beta) * logits - beta * predicted
    assert torch.allclose(out[keep], expected[keep], atol=1e-5)
    assert torch.equal(out[~keep], logits[~keep])
    if beta == 0.0:
        assert torch.equal(out, logits)  # bit for bit
    method.finish(lm, states)
    assert states[0].data["metadata"]["esamp_beta"] == beta


def test_registered_under_esamp() -> None:
    method = resolve_method("esamp", beta=0.25, rank=8)
    assert isinstance(method, ESamp) and method.beta == 0.25 and method.rank == 8


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("transformers") is None, reason="needs transformers")
def test_beta_zero_reproduces_plain_greedy_tokens_and_beta_changes_them() -> None:
    torch.set_num_threads(2)
    from harness.models.whitebox import shared_lm

    lm = shared_lm()[0]
    chats = [[{"role": "user", "content": q}] for q in ("What is 12 + 7?", "Name a fruit.")]
    plain = lm.generate_batch(chats, max_new_tokens=16)
    zero = lm.generate_batch(chats, max_new_tokens=16, method=ESamp(beta=0.0))
    assert [g.tokens for g in zero] == [g.tokens for g in plain]
    strong = lm.generate_batch(chats, max_new_tokens=16, method=ESamp(beta=1.0))
    assert [g.tokens for g in strong] != [g.tokens for g in plain]
    assert all(g.data["metadata"]["esamp_loss"] >= 0 for g in strong)
