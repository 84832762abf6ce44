"""Game of 24: the exact solver, the seeded generator and the verifier's reasons."""

from __future__ import annotations

from fractions import Fraction

import pytest

from environments.probes.game24 import make_item, make_items, solutions, verify


def test_solver_is_exact_and_finds_the_hard_classics() -> None:
    assert solutions((1, 1, 1, 1)) == ()  # no way to 24
    assert solutions((1, 1, 1, 2)) == ()
    hard = solutions((3, 3, 8, 8))  # only 8 / (3 - 8 / 3), which needs exact fractions
    assert hard and all(verify(s, (3, 3, 8, 8)).ok for s in hard)
    assert any("8 / (3 - (8 / 3))" in s for s in hard)
    assert all(verify(s, (4, 4, 10, 10)).ok for s in solutions((4, 4, 10, 10)))


def test_items_are_seeded_solvable_and_in_range() -> None:
    items = make_items(20, seed=3)
    assert items == make_items(20, seed=3) and items != make_items(20, seed=4)
    assert len({item.id for item in items}) == 20
    for item in items:
        assert len(item.numbers) == 4 and all(1 <= n <= 13 for n in item.numbers)
        assert list(item.numbers) == sorted(item.numbers)
        assert verify(item.solution, item.numbers).ok and item.n_solutions >= 1
    assert make_item(5, seed=3) == items[5]
    assert len(make_item(0, seed=0, size=3).numbers) == 3
    with pytest.raises(ValueError):
        make_items(-1)


@pytest.mark.parametrize(("answer", "reason"), [
    ("", "empty answer"),
    ("eight times three", "not an arithmetic expression"),
    ("2 ** 4 + 8", "not allowed in an answer: BinOp"),
    ("__import__('os')", "not allowed in an answer: Call"),
    ("(10 * 10 - 4) / 4 + 0", "uses [0, 4, 4, 10, 10]"),
    ("10 * 10 - 4 - 4", "evaluates to 92, not 24"),
    ("10 / (4 - 4) + 10", "division by zero"),
    ("2.5 * 4 + 10 + 4", "not allowed in an answer: Constant"),
])
def test_verifier_says_why_an_answer_fails(answer: str, reason: str) -> None:
    verdict = verify(answer, (4, 4, 10, 10))
    assert not verdict.ok and reason in verdict.reason


def test_verifier_accepts_equivalent_spellings() -> None:
    for answer in ("(10 * 10 - 4) / 4", "(10*10-4)/4 = 24", "(10 × 10 − 4) ÷ 4".replace("−", "-")):
        verdict = verify(answer, (10, 4, 10, 4))
        assert verdict.ok and verdict.value == Fraction(24)
    assert verify("8 / (3 - 8 / 3)", (3, 8, 3, 8)).ok
