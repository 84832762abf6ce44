"""The ladder SFT's frozen/trained split is exact, and training moves only the top layers."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from methods.scout.ladder_sft import (  # noqa: E402
    TopStack,
    answer_targets,
    prefix_groups,
    top_inputs,
    train_top,
)


def _tiny_llama(seed: int = 0) -> object:
    torch.manual_seed(seed)
    cfg = transformers.LlamaConfig(vocab_size=97, hidden_size=32, intermediate_size=64,
                                   num_hidden_layers=4, num_attention_heads=4,
                                   num_key_value_heads=2, max_position_embeddings=128,
                                   tie_word_embeddings=True, initializer_range=0.5)
    return transformers.LlamaForCausalLM(cfg).eval()


def _rows(learnable: bool = False) -> list[tuple[list[int], list[int]]]:
    """Six rows in two groups sharing a prompt prefix; random answers, or (``learnable``)
    one fixed answer per group, which two small layers can learn in a few dozen steps."""
    gen = torch.Generator().manual_seed(3)
    shared_a = torch.randint(3, 97, (20,), generator=gen).tolist()
    shared_b = torch.randint(3, 97, (15,), generator=gen).tolist()
    rows = []
    for k in range(6):
        prefix = shared_a if k % 2 == 0 else shared_b
        own = torch.randint(3, 97, (3 + k,), generator=gen).tolist()
        answer = torch.randint(3, 97, (2 + k % 3,), generator=gen).tolist()
        if learnable:
            answer = [11, 12, 13] if k % 2 == 0 else [21, 22]
        rows.append((prefix + own, answer))
    return rows


def test_prefix_groups_share_the_common_prompt_run() -> None:
    rows = _rows()
    groups = prefix_groups(rows)
    assert sorted(sorted(m) for _, m in groups) == [[0, 2, 4], [1, 3, 5]]
    lengths = {tuple(m): n for n, m in groups}
    assert lengths[(0, 2, 4)] >= 20 and lengths[(1, 3, 5)] >= 15
    for n, members in groups:
        for i in members:
            assert rows[i][0][:n] == rows[members[0]][0][:n]
            assert n < len(rows[i][0])


@pytest.mark.parametrize("split", [1, 3])
def test_top_stack_logits_equal_the_full_model(split: int) -> None:
    model = _tiny_llama()
    rows = _rows()
    hidden = top_inputs(model, rows, split)
    targets = answer_targets(rows)
    got = TopStack(model, split).logits_at(hidden, [t[0] for t in targets])
    for (prompt, answer), logits, (positions, _) in zip(rows, got, targets, strict=True):
        full = model(input_ids=torch.tensor([prompt + answer[:-1]])).logits[0]
        assert torch.allclose(logits, full[positions], atol=1e-4), (split, prompt[:3])


def test_training_lowers_the_answer_loss_and_moves_only_the_top() -> None:
    model = _tiny_llama()
    rows = _rows(learnable=True)
    split = 2
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    hidden = top_inputs(model, rows, split)
    losses = train_top(model, hidden, rows, split, {"lr": 1e-2, "steps": 40, "batch": 4},
                       seed=0, log=None)
    assert losses[-1] < 0.5 * losses[0]
    moved = {n for n, p in model.named_parameters() if not torch.equal(p, before[n])}
    assert moved, "nothing was trained"
    for name in moved:
        assert name.startswith(("model.layers.2.", "model.layers.3.", "model.norm.")), name
    again = _tiny_llama()
    assert train_top(again, top_inputs(again, rows, split), rows, split,
                     {"lr": 1e-2, "steps": 40, "batch": 4}, seed=0, log=None) == losses
