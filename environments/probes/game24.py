"""Game of 24 items: four numbers, reach 24 with + - * / and parentheses, each number once.

Pure domain code (no Inspect): the generator, an exact solver and the verifier behind a
branching, revisiting search task (a tree-of-thought decoder proposes partial combinations,
abandons some and returns to others). Arithmetic is exact (:class:`fractions.Fraction`), so
``8 / (3 - 8 / 3)`` is 24 and no float rounding decides a verdict.

The verifier reads an answer as an arithmetic expression through :mod:`ast` (numbers,
``+ - * /``, unary minus, parentheses; nothing is evaluated by ``eval``) and says why it
fails: not an expression, another operator, other numbers than the puzzle's, division by
zero, or a value other than 24.
"""

from __future__ import annotations

import ast
import itertools
import random
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

__all__ = ["TARGET", "Game24Item", "Verdict", "extract_answer", "make_item", "make_items",
           "render_prompt", "render_turns", "solvable", "solutions", "verify"]

TARGET = 24
LOW, HIGH = 1, 13
"""Numbers are drawn from 1..13, the card values of the classic game."""


@dataclass(frozen=True)
class Game24Item:
    """One puzzle: its numbers (sorted), one solution, and how many distinct solution
    expressions the exhaustive search writes (a difficulty proxy: a puzzle with few is
    harder to hit by chance; commuted forms of one solution may count more than once)."""

    id: str
    numbers: tuple[int, ...]
    solution: str
    n_solutions: int

    def record(self) -> dict[str, Any]:
        """Plain dict (dataset record)."""
        return asdict(self)


@dataclass(frozen=True)
class Verdict:
    """A checked answer: ``ok`` and, when not, the reason."""

    ok: bool
    reason: str = ""
    value: Fraction | None = None


def _combine(a: tuple[Fraction, str], b: tuple[Fraction, str]
             ) -> Iterator[tuple[Fraction, str]]:
    (x, ex), (y, ey) = a, b
    yield x + y, f"({ex} + {ey})"
    yield x * y, f"({ex} * {ey})"
    yield x - y, f"({ex} - {ey})"
    yield y - x, f"({ey} - {ex})"
    if y != 0:
        yield x / y, f"({ex} / {ey})"
    if x != 0:
        yield y / x, f"({ey} / {ex})"


def _search(items: tuple[tuple[Fraction, str], ...]) -> Iterator[str]:
    if len(items) == 1:
        value, text = items[0]
        if value == TARGET:
            yield text[1:-1] if text.startswith("(") and text.endswith(")") else text
        return
    for i, j in itertools.combinations(range(len(items)), 2):
        rest = tuple(item for k, item in enumerate(items) if k not in (i, j))
        for combined in _combine(items[i], items[j]):
            yield from _search((*rest, combined))


@lru_cache(maxsize=4096)
def solutions(numbers: tuple[int, ...]) -> tuple[str, ...]:
    """Every distinct solution expression of ``numbers`` (sorted, so the first is stable)."""
    start = tuple((Fraction(n), str(n)) for n in sorted(numbers))
    return tuple(sorted(set(_search(start))))


def solvable(numbers: Sequence[int]) -> bool:
    """Whether some expression of ``numbers`` (each once, + - * /) is exactly 24."""
    return bool(solutions(tuple(sorted(numbers))))


def make_item(index: int, seed: int, size: int = 4) -> Game24Item:
    """Item ``index`` of the seeded stream: the first solvable draw of ``size`` numbers in
    1..13 from a generator seeded by (seed, index, size). Same arguments, same item."""
    if size < 2:
        raise ValueError("size must be >= 2")
    rng = random.Random(f"game24:{seed}:{index}:{size}")
    while True:
        numbers = tuple(sorted(rng.randint(LOW, HIGH) for _ in range(size)))
        found = solutions(numbers)
        if found:
            return Game24Item(f"{seed}-{index}", numbers, found[0], len(found))


def make_items(n: int, seed: int = 0, size: int = 4) -> list[Game24Item]:
    """``n`` seeded solvable items."""
    if n < 0:
        raise ValueError("n must be >= 0")
    return [make_item(i, seed, size) for i in range(n)]


class _Reject(ValueError):
    pass


def _value(node: ast.AST, used: list[int]) -> Fraction:
    if isinstance(node, ast.Expression):
        return _value(node.body, used)
    if isinstance(node, ast.Constant) and type(node.value) is int:
        used.append(node.value)
        return Fraction(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_value(node.operand, used)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult | ast.Div):
        left, right = _value(node.left, used), _value(node.right, used)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            return left * right
        if right == 0:
            raise _Reject("division by zero")
        return left / right
    raise _Reject(f"not allowed in an answer: {type(node).__name__} "
                  "(only integers, + - * /, unary minus and parentheses)")


def verify(answer: str, numbers: Sequence[int]) -> Verdict:
    """Check ``answer`` (an expression, optionally followed by ``= 24``) against the
    puzzle's ``numbers``: each used exactly once, value exactly 24."""
    text = answer.strip().replace("×", "*").replace("÷", "/")
    if "=" in text:
        text = text.split("=", 1)[0].strip()
    if not text:
        return Verdict(False, "empty answer")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return Verdict(False, f"not an arithmetic expression: {answer.strip()[:80]!r}")
    used: list[int] = []
    try:
        value = _value(tree, used)
    except _Reject as exc:
        return Verdict(False, str(exc))
    if sorted(used) != sorted(numbers):
        return Verdict(False, f"uses {sorted(used)}, the puzzle's numbers are "
                              f"{sorted(numbers)} (each exactly once)", value)
    if value != TARGET:
        return Verdict(False, f"evaluates to {value}, not {TARGET}", value)
    return Verdict(True, "", value)


EXAMPLES: dict[int, tuple[tuple[tuple[int, ...], str], ...]] = {
    3: (
        ((2, 3, 4), "2 * 3 = 6 (left: 4 6)\n4 * 6 = 24 (left: 24)\nAnswer: (2 * 3) * 4 = 24"),
        ((1, 5, 5), "5 * 5 = 25 (left: 1 25)\n25 - 1 = 24 (left: 24)\nAnswer: 5 * 5 - 1 = 24"),
    ),
    4: (
        ((4, 9, 10, 13), "13 - 9 = 4 (left: 4 4 10)\n10 - 4 = 6 (left: 4 6)\n"
                         "4 * 6 = 24 (left: 24)\nAnswer: (10 - 4) * (13 - 9) = 24"),
        ((1, 4, 8, 8), "8 / 4 = 2 (left: 1 2 8)\n1 + 2 = 3 (left: 3 8)\n"
                       "3 * 8 = 24 (left: 24)\nAnswer: (1 + 8 / 4) * 8 = 24"),
    ),
}
"""Worked examples (one step per line, then the answer) shown before a puzzle of that size:
the step-per-line format is what a tree-of-thought decoder branches on."""


RULES = (f"Use each of the numbers exactly once, with + - * / and parentheses, to make "
         f"{TARGET}. Write one operation per line with the numbers left, then the answer.")


def _numbers_line(numbers: Sequence[int]) -> str:
    return "Numbers: " + " ".join(map(str, numbers))


def render_prompt(numbers: Sequence[int]) -> str:
    """The puzzle as one text: the rules, worked examples of the same size, the numbers."""
    shots = EXAMPLES.get(len(numbers), EXAMPLES[4])
    lines = [RULES]
    for nums, worked in shots:
        lines += ["", _numbers_line(nums), worked]
    lines += ["", _numbers_line(numbers)]
    return "\n".join(lines)


def render_turns(numbers: Sequence[int]) -> list[tuple[str, str]]:
    """The puzzle as chat turns, ``(role, text)``: the rules as the system turn, each worked
    example as a user turn (its numbers) answered by an assistant turn (its steps), then the
    puzzle's numbers. A chat model reads examples inside one user turn as text to repeat
    (greedy Qwen2.5-Coder-0.5B-Instruct began with the first example's steps on 8 of 12
    items); as earlier turns they are answers it has given, and it works on the new numbers
    (20 of 20 replies used the puzzle's own numbers)."""
    turns = [("system", RULES)]
    for nums, worked in EXAMPLES.get(len(numbers), EXAMPLES[4]):
        turns += [("user", _numbers_line(nums)), ("assistant", worked)]
    turns.append(("user", _numbers_line(numbers)))
    return turns


def extract_answer(text: str) -> str:
    """The expression a reply commits to: the text after the last ``Answer:`` (up to the end
    of that line), else the reply's last non-empty line."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    for line in reversed(lines):
        if "answer:" in line.lower():
            return line[line.lower().rindex("answer:") + len("answer:"):].strip().rstrip(".")
    return lines[-1].rstrip(".") if lines else ""
