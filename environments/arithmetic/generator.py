"""A tiny, seeded world of integer arithmetic problems.

Why it exists: every layer of the suite (providers, sandboxes, results, the factorial engine,
leaderboards) needs a benchmark that runs in seconds on a CPU and whose gold answers are
exact. The five research benchmarks are heavier; this one is the smoke test they all share.
"""

from __future__ import annotations

import ast
import operator
from dataclasses import asdict, dataclass

import numpy as np

_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul}
_SYMBOLS = ("+", "-", "*")


@dataclass(frozen=True)
class Problem:
    """One problem: a stable id, the expression shown to the agent, and its exact value."""

    id: str
    expression: str
    answer: int
    n_terms: int

    def to_record(self) -> dict[str, object]:
        """The record form written to / read from dataset files."""
        return asdict(self)


def evaluate(expression: str) -> int:
    """Evaluate an integer expression of + - * and parentheses, safely (no ``eval``).

    Raises ``ValueError`` with the reason on anything else, so tools can hand the error back
    to the model instead of crashing.
    """
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"not an arithmetic expression: {expression!r}") from exc
    return _eval_node(tree.body)


def _eval_node(node: ast.AST) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return int(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval_node(node.operand)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return int(_OPS[type(node.op)](_eval_node(node.left), _eval_node(node.right)))
    raise ValueError(f"unsupported syntax: {ast.dump(node)[:60]}")


def generate_problems(
    n: int, seed: int = 0, min_terms: int = 2, max_terms: int = 4, max_operand: int = 99
) -> list[Problem]:
    """Generate ``n`` problems; the same arguments always give the same problems.

    Ids encode the seed and index (``s{seed}-{i:05d}``) so they are stable across runs and
    pair across factor levels.
    """
    if n < 0:
        raise ValueError("n must be >= 0")
    if not 2 <= min_terms <= max_terms:
        raise ValueError("need 2 <= min_terms <= max_terms")
    rng = np.random.default_rng(seed)
    n_terms = rng.integers(min_terms, max_terms + 1, size=n)
    operands = rng.integers(1, max_operand + 1, size=(n, max_terms))
    ops = rng.integers(0, len(_SYMBOLS), size=(n, max_terms - 1))
    problems = []
    for i in range(n):
        k = int(n_terms[i])
        parts = [str(int(operands[i, 0]))]
        for j in range(1, k):
            parts += [_SYMBOLS[int(ops[i, j - 1])], str(int(operands[i, j]))]
        expression = " ".join(parts)
        problems.append(
            Problem(id=f"s{seed}-{i:05d}", expression=expression, answer=evaluate(expression),
                    n_terms=k)
        )
    return problems
