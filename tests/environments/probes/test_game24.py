"""Game of 24: the exact solver, the seeded generator and the verifier's reasons."""

from __future__ import annotations

from fractions import Fraction

import pytest

from environments.probes.game24 import (
    EXAMPLES,
    extract_answer,
    make_item,
    make_items,
    render_prompt,
    render_turns,
    solutions,
    solvable,
    verify,
)


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


@pytest.mark.parametrize(("numbers", "expected"), [
    ((4, 4, 10, 10), True), ((3, 3, 8, 8), True), ((1, 5, 5, 5), True), ((2, 3, 4), True),
    ((1, 1, 1, 1), False), ((1, 1, 1, 2), False), ((1, 1, 1), False), ((1, 1, 2, 2), False),
    ((13, 13, 13), False), ((4, 6), True), ((5, 5), False),
])
def test_solvable_on_known_instances(numbers: tuple[int, ...], expected: bool) -> None:
    assert solvable(numbers) is expected
    assert solvable(tuple(reversed(numbers))) is expected


def test_three_number_items_are_solvable_and_seeded() -> None:
    items = make_items(30, seed=0, size=3)
    assert items == make_items(30, seed=0, size=3)
    assert all(len(i.numbers) == 3 and solvable(i.numbers) for i in items)
    assert all(verify(i.solution, i.numbers).ok for i in items)


def test_extract_answer_takes_the_last_answer_line() -> None:
    reply = "2 * 3 = 6 (left: 4 6)\n4 * 6 = 24 (left: 24)\nAnswer: (2 * 3) * 4 = 24\n"
    assert extract_answer(reply) == "(2 * 3) * 4 = 24"
    assert verify(extract_answer(reply), (2, 3, 4)).ok
    assert extract_answer("answer: 1 + 2\nANSWER: 3 * 8.") == "3 * 8"
    assert extract_answer("no marker\n  4 * 6  \n") == "4 * 6"
    assert extract_answer("   ") == ""
    assert not verify(extract_answer("Answer: 4 * 6 = 24"), (2, 3, 4)).ok


@pytest.mark.parametrize("size", sorted(EXAMPLES))
def test_prompt_examples_are_correct_and_end_with_the_puzzle(size: int) -> None:
    for numbers, worked in EXAMPLES[size]:
        assert verify(extract_answer(worked), numbers).ok
    item = make_item(0, seed=0, size=size)
    text = render_prompt(item.numbers)
    assert text.endswith("Numbers: " + " ".join(map(str, item.numbers)))
    assert text == render_prompt(item.numbers) and "make 24" in text


@pytest.mark.parametrize("size", sorted(EXAMPLES))
def test_chat_turns_hold_the_same_examples_as_answered_turns(size: int) -> None:
    item = make_item(1, seed=0, size=size)
    turns = render_turns(item.numbers)
    roles = [role for role, _ in turns]
    assert roles == ["system"] + ["user", "assistant"] * len(EXAMPLES[size]) + ["user"]
    assert turns[-1] == ("user", "Numbers: " + " ".join(map(str, item.numbers)))
    # every worked example is an assistant turn, answering the user turn with its numbers
    for (numbers, worked), i in zip(EXAMPLES[size], range(1, len(turns) - 1, 2), strict=True):
        assert turns[i] == ("user", "Numbers: " + " ".join(map(str, numbers)))
        assert turns[i + 1] == ("assistant", worked)
    # the text form says the same things, in one turn
    text = render_prompt(item.numbers)
    assert all(t in text for _, t in turns)
