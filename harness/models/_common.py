"""Pieces the offline providers (``scripted/``, ``embedded/``, ``whitebox/``) share.

Why a module of its own: the three ModelAPIs take their ``-M`` args the same way, build their
replies the same way (one assistant choice, usage always set so Inspect never reaches for
tiktoken) and the two real models sample with the same defaults. Keeping that here means a
fix to, say, the stop-reason rule reaches every provider at once. It imports only Inspect
and :mod:`harness.models.toolprompt`, never llama_cpp / torch / transformers.
"""

from __future__ import annotations

from typing import Any, ClassVar

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    StopReason,
)
from inspect_ai.tool import ToolCall, ToolChoice, ToolInfo

from harness.models.toolprompt import parse_tool_calls

DEFAULT_MAX_TOKENS = 512
DEFAULT_TEMPERATURE = 0.2
DEFAULT_TOP_P = 0.9
"""Sampling when the task sets none: SmolLM2's model-card values (greedy decoding of a 135M
model falls into repetition loops). :func:`call_seed` makes every call repeatable anyway."""


def call_seed(prompt: str, seed: int | None) -> int:
    """The sampling seed of one call: a stable hash of the prompt, mixed with the config seed.

    Why per call: a process-wide RNG chain depends on the order in which samples reach the
    model, which concurrency makes arbitrary; seeding from the prompt gives the same reply
    to the same prompt in any order, any process (same seed, same data, same score).
    """
    import zlib

    return (zlib.crc32(prompt.encode("utf-8")) ^ (seed or 0)) & 0x7FFFFFFF


class LocalModelAPI(ModelAPI):
    """A ModelAPI with no remote service: no API key variables, ``-M`` args go to :meth:`setup`.

    Inspect constructs every provider with ``(model_name, base_url, api_key, config,
    **model_args)``; subclasses declare only the ``-M`` args they understand as keyword
    parameters of :meth:`setup` and hand the rest to ``super().setup`` to be rejected.
    """

    provider: ClassVar[str] = ""
    """The provider prefix (``embedded`` for ``embedded/<name>``), used in error messages."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        self.setup(**model_args)

    def setup(self, **model_args: Any) -> None:
        """Take the provider's ``-M`` args; what reaches here is unknown, so it is an error
        (a typo like ``nctx=4096`` must not be silently ignored)."""
        if model_args:
            raise ValueError(f"unknown model args for {self.provider}/: {sorted(model_args)}")


def sampling(config: GenerateConfig) -> tuple[int, float, float]:
    """``(max_tokens, temperature, top_p)`` of ``config``, with the defaults above for unset
    values (a temperature or top_p of 0 is kept: it is a choice, not an absence)."""
    return (
        config.max_tokens or DEFAULT_MAX_TOKENS,
        DEFAULT_TEMPERATURE if config.temperature is None else config.temperature,
        DEFAULT_TOP_P if config.top_p is None else config.top_p,
    )


def split_reply(
    text: str, tools: list[ToolInfo] | list[str], tool_choice: ToolChoice
) -> tuple[str, list[ToolCall]]:
    """Content and tool calls of a generated reply; with ``tool_choice="none"`` nothing is a
    call (the tools were hidden from the prompt, so tags in the text are just text)."""
    if tool_choice == "none":
        return text.strip(), []
    return parse_tool_calls(text, tools)


def stop_reason(finish: str | None, has_calls: bool) -> StopReason:
    """Inspect's stop reason from a backend finish reason (``stop``, ``length`` or our own
    ``model_length`` for a prompt that overflows the context): an overflow wins, then tool
    calls, then a hit token budget."""
    if finish == "model_length":
        return "model_length"
    if has_calls:
        return "tool_calls"
    if finish == "length":
        return "max_tokens"
    return "stop"


def make_usage(
    input_tokens: int, output_tokens: int, total_tokens: int | None = None
) -> ModelUsage:
    """Token usage; the total is the sum unless the backend reports its own."""
    total = input_tokens + output_tokens if total_tokens is None else total_tokens
    return ModelUsage(input_tokens=input_tokens, output_tokens=output_tokens, total_tokens=total)


def assistant_output(
    model: str,
    content: str,
    tool_calls: list[ToolCall] | None,
    stop: StopReason,
    usage: ModelUsage | None = None,
) -> ModelOutput:
    """A one-choice ModelOutput whose assistant message is stamped with ``model``."""
    message = ChatMessageAssistant(
        content=content, tool_calls=tool_calls, model=model, source="generate"
    )
    return ModelOutput(
        model=model,
        choices=[ChatCompletionChoice(message=message, stop_reason=stop)],
        usage=usage,
    )


def reply_output(
    model: str,
    text: str,
    tools: list[ToolInfo],
    tool_choice: ToolChoice,
    finish: str | None,
    usage: ModelUsage,
) -> ModelOutput:
    """The ModelOutput of a prompt-based tool-calling model's raw reply ``text``: tool calls
    parsed out (see :func:`split_reply`), stop reason from ``finish`` (see :func:`stop_reason`)."""
    content, calls = split_reply(text, tools, tool_choice)
    return assistant_output(model, content, calls or None, stop_reason(finish, bool(calls)), usage)
