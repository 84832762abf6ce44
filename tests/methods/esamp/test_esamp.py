"""ESamp: distillers learn, groups stay independent while a prompt's rows share one; the
error is a novelty signal; the reweighting is the formula; a prompt's rows do not depend on
the other prompts in the batch; beta = 0 reproduces the plain model's greedy tokens exactly
(slow: loads SmolLM2)."""

from __future__ import annotations

import importlib.util
from types import SimpleNamespace
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from harness.plugins.whitebox_method import RequestState, StepView, resolve_method  # noqa: E402
from methods.esamp.esamp import Distillers, ESamp, group_rows  # noqa: E402

HIDDEN, VOCAB = 16, 11
NAMES = ("model.layers.0.input_layernorm", "model.layers.2.input_layernorm")


def _fake_lm() -> Any:
    gen = torch.Generator().manual_seed(0)
    head = torch.nn.Linear(HIDDEN, VOCAB, bias=False)
    with torch.no_grad():
        head.weight.copy_(torch.randn(VOCAB, HIDDEN, generator=gen))
    model = SimpleNamespace(
        config=SimpleNamespace(hidden_size=HIDDEN), get_output_embeddings=lambda: head
    )
    return SimpleNamespace(model=model, n_layers=3, device=torch.device("cpu"))


def _view(shallow: Any, deep: Any, logits: Any, keep: Any) -> StepView:
    return StepView(1, None, None, {}, dict(zip(NAMES, (shallow, deep), strict=True)), None,
                    logits, keep)


def test_group_rows_in_first_appearance_order() -> None:
    assert group_rows(["b", "a", "b", "c", "a"]) == ([0, 1, 0, 2, 1], ["b", "a", "c"])


def test_distiller_learns_a_fixed_mapping() -> None:
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(1, 8, HIDDEN, generator=gen)
    target = torch.nn.functional.layer_norm(x @ torch.randn(HIDDEN, HIDDEN, generator=gen),
                                            (HIDDEN,))
    d = Distillers([3], [0], HIDDEN, rank=8, lr=1e-2, device="cpu")
    mask = torch.ones(1, 8)
    d.step(x, target, mask)
    first = d.first_loss[0]
    for _ in range(200):
        d.step(x, target, mask)
    assert d.last_loss[0] < 0.5 * first and d.steps == 201


def test_groups_do_not_influence_each_other() -> None:
    gen = torch.Generator().manual_seed(2)
    x = torch.randn(2, 4, HIDDEN, generator=gen)
    y = torch.randn(2, 4, HIDDEN, generator=gen)
    alone = Distillers([5], [0], HIDDEN, 8, 1e-2, "cpu")
    pair = Distillers([5, 9], [0, 1], HIDDEN, 8, 1e-2, "cpu")
    for _ in range(5):
        alone.step(x[:1], y[:1], torch.ones(1, 4))
        pair.step(x, y, torch.ones(2, 4))
    for p_alone, p_pair in zip(alone.params, pair.params, strict=True):
        assert torch.allclose(p_alone[0], p_pair[0], atol=1e-6)
    assert not torch.allclose(pair.params[0][0], pair.params[0][1])  # seeds differ


def test_rows_of_a_group_train_one_distiller_on_their_mean_loss() -> None:
    gen = torch.Generator().manual_seed(4)
    x = torch.randn(2, 1, HIDDEN, generator=gen)
    y = torch.randn(2, 1, HIDDEN, generator=gen)
    shared = Distillers([5], [0, 0], HIDDEN, 8, 1e-2, "cpu")
    # the same distiller fed both rows as positions of one sequence: the same mean MSE
    flat = Distillers([5], [0], HIDDEN, 8, 1e-2, "cpu")
    for _ in range(3):
        shared.step(x, y, torch.ones(2, 1))
        flat.step(x.reshape(1, 2, HIDDEN), y.reshape(1, 2, HIDDEN), torch.ones(1, 2))
    for p_shared, p_flat in zip(shared.params, flat.params, strict=True):
        assert p_shared.shape[0] == 1
        assert torch.allclose(p_shared, p_flat, atol=1e-6)
    assert shared.last_loss[0] == shared.last_loss[1] == pytest.approx(flat.last_loss[0])
    # a done row (mask 0) does not train the group
    masked = Distillers([5], [0, 0], HIDDEN, 8, 1e-2, "cpu")
    alone = Distillers([5], [0], HIDDEN, 8, 1e-2, "cpu")
    masked.step(x, y, torch.tensor([[1.0], [0.0]]))
    alone.step(x[:1], y[:1], torch.ones(1, 1))
    assert torch.allclose(masked.params[0], alone.params[0], atol=1e-6)


def test_error_is_a_novelty_signal() -> None:
    """After training on one mapping's inputs, familiar inputs predict better than novel
    ones: the property ESamp's reweighting rests on."""
    gen = torch.Generator().manual_seed(6)
    w = torch.randn(HIDDEN, HIDDEN, generator=gen)
    centre = torch.randn(HIDDEN, generator=gen) * 3
    familiar = centre + 0.3 * torch.randn(1, 32, HIDDEN, generator=gen)
    novel = -centre + 0.3 * torch.randn(1, 32, HIDDEN, generator=gen)

    def target(x: Any) -> Any:
        return torch.nn.functional.layer_norm(torch.tanh(x @ w), (HIDDEN,))

    d = Distillers([1], [0], HIDDEN, 8, 1e-2, "cpu")
    for _ in range(150):
        d.step(familiar, target(familiar), torch.ones(1, 32))
    with torch.no_grad():
        err_familiar = float(((d(familiar) - target(familiar)) ** 2).mean())
        err_novel = float(((d(novel) - target(novel)) ** 2).mean())
    assert err_familiar < 0.5 * err_novel


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
    meta = states[0].data["metadata"]
    assert meta["esamp_beta"] == beta and meta["esamp_steps"] == 1
    assert meta["esamp_group_rows"] == 1


def _run_steps(prompts: list[str], inputs: Any, share: str = "prompt") -> Any:
    """Three decode steps of ESamp over rows with the given prompts; logits per step."""
    lm = _fake_lm()
    states = [RequestState(i, p, 100 + i) for i, p in enumerate(prompts)]
    method = ESamp(beta=0.5, rank=4, lr=1e-2, share=share)  # type: ignore[arg-type]
    method.start(lm, states)
    keep = torch.ones(len(prompts), VOCAB, dtype=torch.bool)
    outs = []
    for shallow, deep, logits in inputs:
        outs.append(method.process_logits(lm, logits, _view(shallow, deep, logits, keep),
                                          states))
    method.finish(lm, states)
    return torch.stack(outs), states


def test_prompt_groups_are_independent_of_the_other_prompts_in_the_batch() -> None:
    gen = torch.Generator().manual_seed(7)
    steps = [(torch.randn(4, 1, HIDDEN, generator=gen), torch.randn(4, 1, HIDDEN, generator=gen),
              torch.randn(4, VOCAB, generator=gen)) for _ in range(3)]
    mixed, states = _run_steps(["p", "p", "q", "q"], steps)
    alone, _ = _run_steps(["p", "p"], [(s[:2], d[:2], z[:2]) for s, d, z in steps])
    assert torch.allclose(mixed[:, :2], alone, atol=1e-5)
    assert [s.data["metadata"]["esamp_group_rows"] for s in states] == [2, 2, 2, 2]
    # siblings interact: row 0 alone (no sibling) is steered differently from step 2 on
    solo, _ = _run_steps(["p"], [(s[:1], d[:1], z[:1]) for s, d, z in steps])
    assert torch.allclose(solo[0], alone[0, :1], atol=1e-6)  # step 1: nothing learnt yet
    assert not torch.allclose(solo[1:], alone[1:, :1], atol=1e-4)
    per_row, states = _run_steps(["p", "p"], [(s[:2], d[:2], z[:2]) for s, d, z in steps],
                                 share="row")
    assert [s.data["metadata"]["esamp_group_rows"] for s in states] == [1, 1]


def test_registered_under_esamp() -> None:
    method = resolve_method("esamp", beta=0.25, rank=8)
    assert isinstance(method, ESamp) and method.beta == 0.25 and method.rank == 8
    assert method.lr == 1e-3 and method.share == "prompt"
    with pytest.raises(ValueError):
        resolve_method("esamp", share="batch")


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


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("transformers") is None, reason="needs transformers")
@pytest.mark.parametrize("beta", [None, 0.3])
def test_shared_prefill_samples_as_the_unshared_path(beta: float | None) -> None:
    """n samples of one prompt prefilled once give the tokens each row gets when prefilled
    itself (same seeds), with no method and with ESamp; a second prompt in the batch too."""
    torch.set_num_threads(1)
    from harness.models.whitebox import shared_lm
    from harness.models.whitebox_decode import DecodeParams, decode

    lm = shared_lm()[0]
    one = lm.chat_prompt([{"role": "user", "content": "What is 17 + 25 + 31?"}])
    two = lm.chat_prompt([{"role": "user", "content": "Name a colour."}])
    prompts, seeds = [one, one, two, one, two], [0, 1, 2, 3, 4]
    params = DecodeParams(max_new_tokens=8, temperature=0.9, top_p=0.95)

    def run(share: bool) -> Any:
        method = ESamp(beta=beta) if beta is not None else None
        return decode(lm, prompts, seeds, params, method, share_prefill=share)

    shared, unshared = run(True), run(False)
    assert [r.tokens for r in shared] == [r.tokens for r in unshared]
    assert len({tuple(r.tokens) for r in shared[:2]}) == 2  # seeds still differ per row
    if beta is not None:
        assert [r.state.data["metadata"]["esamp_group_rows"] for r in shared] == [3, 3, 2, 3, 2]
