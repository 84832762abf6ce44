"""The calculator tool: a function call, not a subprocess, so a tool turn costs microseconds."""

from inspect_ai.tool import Tool, ToolError, tool

from environments.arithmetic import evaluate


@tool
def calculator() -> Tool:
    async def execute(expression: str) -> str:
        """Evaluate an integer arithmetic expression with + - * and parentheses.

        Args:
            expression: The expression to evaluate, e.g. "12 + 7 * 3".

        Returns:
            The exact integer value.
        """
        try:
            return str(evaluate(expression))
        except ValueError as exc:  # handed back to the model as a tool error
            raise ToolError(str(exc)) from exc

    return execute
