"""Reference agents for the arithmetic benchmark, as scripted policies.

``scripted/arith-oracle`` uses the calculator (when offered) and is always right: it proves
the task solvable through its tools. ``scripted/arith-left-to-right`` ignores operator
precedence, a classic human slip, so it is right exactly on the problems where precedence
doesn't matter: a reference agent with a known, partial score.
"""

from __future__ import annotations

import re
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageTool, GenerateConfig
from inspect_ai.tool import ToolInfo

from harness.models.scripted import (
    PolicyResult,
    last_user_text,
    scripted_policy,
    tool_call,
)

_EXPR = re.compile(r"-?\d+(?:\s*[-+*]\s*-?\d+)+")


def _expression(input: list[ChatMessage]) -> str:
    for message in input:
        match = _EXPR.search(message.text)
        if match and message.role == "user":
            return match.group(0)
    match = _EXPR.search(last_user_text(input))
    return match.group(0) if match else "0"


def _finish(answer: str, input: list[ChatMessage], tools: list[ToolInfo]) -> PolicyResult:
    if any(t.name == "submit" for t in tools):
        return tool_call("submit", {"answer": answer}, input)
    return answer


def left_to_right(expression: str) -> int:
    """Evaluate strictly left to right, ignoring precedence."""
    tokens = expression.split()
    value = int(tokens[0])
    for op, operand in zip(tokens[1::2], tokens[2::2], strict=True):
        n = int(operand)
        value = value + n if op == "+" else value - n if op == "-" else value * n
    return value


@scripted_policy("arith-oracle")
def arith_oracle(input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig,
                 args: dict[str, Any]) -> PolicyResult:
    """Call the calculator on the expression, then submit its result."""
    results = [m for m in input if isinstance(m, ChatMessageTool) and m.function == "calculator"]
    if results:
        return _finish(results[-1].text.strip(), input, tools)
    expression = _expression(input)
    if any(t.name == "calculator" for t in tools):
        return tool_call("calculator", {"expression": expression}, input)
    from environments.arithmetic import evaluate

    return _finish(str(evaluate(expression)), input, tools)


@scripted_policy("arith-left-to-right")
def arith_left_to_right(input: list[ChatMessage], tools: list[ToolInfo],
                        config: GenerateConfig, args: dict[str, Any]) -> PolicyResult:
    """Answer without tools, evaluating left to right (wrong wherever precedence matters)."""
    return _finish(str(left_to_right(_expression(input))), input, tools)
