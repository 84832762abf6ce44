"""Deterministic, offline ``scripted/<policy>`` model for tests, oracles and reference agents.

A *policy* is a plain rule function that looks at the conversation and the offered tools and
decides what the "model" says next. Policies are registered by name with
:func:`scripted_policy`; the part of the model name after ``scripted/`` picks the policy, and
extra ``-M`` model args are handed to it as ``args``::

    inspect eval benchmarks/foo --model scripted/fixed -M answer=42
    inspect eval benchmarks/foo --model scripted/tool-then-answer \\
        -M tool=lookup -M arguments='{"key": "x"}'

Benchmarks register their oracle policies the same way (public API)::

    from harness.models.scripted import scripted_policy

    @scripted_policy("foo-oracle")
    def foo_oracle(input, tools, config, args):
        return "the known answer"          # or a ModelOutput, a ToolCall or a list[ToolCall]

A policy module that is not imported by the time the model is created can be named with
``-M policy_module=mypackage.oracle``; it is imported before the policy is looked up.

Why not ``mockllm/``: mockllm without explicit ``usage`` counts tokens with tiktoken, which
downloads its encoding and fails offline. Every output here carries ``usage`` computed by a
whitespace rule, and :meth:`ScriptedModelAPI.count_text_tokens` uses the same rule, so
tiktoken is never touched.

Note on ``-M`` values: Inspect parses them as YAML and splits unquoted values on commas, so
``-M answer=Paris, France`` arrives as a list; string-valued args are re-joined with ``,``.
"""

from __future__ import annotations

import importlib
import inspect
import json
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    ModelCall,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.tool import ToolCall, ToolChoice, ToolInfo

from harness.models._common import LocalModelAPI, assistant_output, make_usage
from harness.plugins.aliases import resolve
from harness.plugins.core import find
from harness.plugins.policy import (
    Policy,
    PolicyResult,
    get_policy,
    list_policies,
    scripted_policy,
)

# the policy kind's decorator and types live in harness.plugins.policy; a policy module
# imports them from here too, beside the authoring helpers below (tool_call, arg_str, ...)
__all__ = ["Policy", "PolicyResult", "ScriptedModelAPI", "arg_json", "arg_str", "count_words",
           "get_policy", "last_user_text", "list_policies", "scripted_policy", "tool_call",
           "turn_index"]

# ----------------------------------------------------------------------------- token rule


def count_words(text: str) -> int:
    """The cheap, deterministic token rule of this provider: whitespace-separated words."""
    return len(text.split())


def _message_words(message: ChatMessage) -> int:
    words = count_words(message.text)
    if isinstance(message, ChatMessageAssistant) and message.tool_calls:
        for call in message.tool_calls:
            words += count_words(call.function) + count_words(json.dumps(call.arguments))
    return words


def _tools_words(tools: list[ToolInfo]) -> int:
    return sum(count_words(json.dumps(t.model_dump(exclude_none=True))) for t in tools)


def _usage(input: list[ChatMessage], tools: list[ToolInfo], output: ModelOutput) -> ModelUsage:
    input_tokens = sum(_message_words(m) for m in input) + _tools_words(tools)
    output_tokens = sum(_message_words(c.message) for c in output.choices)
    return make_usage(input_tokens, output_tokens)


# ----------------------------------------------------------------------------- helpers for policies


def arg_str(args: dict[str, Any], key: str, default: str = "") -> str:
    """A string model arg, undoing Inspect's comma split (``a,b`` arrives as ``["a", "b"]``)."""
    value = args.get(key, default)
    if value is None:
        return default
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value)


def arg_json(args: dict[str, Any], key: str) -> Any:
    """A JSON model arg: already-parsed YAML values pass through, strings are decoded."""
    value = args.get(key)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        value = ",".join(value)  # a JSON string that Inspect split on commas
    if isinstance(value, str):
        return json.loads(value)
    return value


def turn_index(input: list[ChatMessage]) -> int:
    """How many assistant turns precede this call: the step number of a scripted agent."""
    return sum(isinstance(m, ChatMessageAssistant) for m in input)


def last_user_text(input: list[ChatMessage]) -> str:
    """Text of the most recent user message ('' when there is none)."""
    for message in reversed(input):
        if isinstance(message, ChatMessageUser):
            return message.text
    return ""


def tool_call(function: str, arguments: dict[str, Any], input: list[ChatMessage]) -> ToolCall:
    """A tool call whose id is deterministic and unique within the conversation."""
    return ToolCall(
        id=f"call_{turn_index(input)}_{function}", function=function, arguments=arguments
    )


def _offers(tools: list[ToolInfo], name: str) -> bool:
    return any(t.name == name for t in tools)


def _answer_or_submit(
    text: str, input: list[ChatMessage], tools: list[ToolInfo], args: dict[str, Any]
) -> PolicyResult:
    """Answer with ``text``, through the ``submit`` tool when one is offered (react agents)."""
    submit = arg_str(args, "submit_tool", "submit")
    if _offers(tools, submit) and not _submitted(input, submit):
        return tool_call(submit, {"answer": text}, input)
    return text


def _submitted(input: list[ChatMessage], submit: str) -> bool:
    return any(isinstance(m, ChatMessageTool) and m.function == submit for m in input)


# ----------------------------------------------------------------------------- generic policies


@scripted_policy("echo")
def echo(
    input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig, args: dict[str, Any]
) -> PolicyResult:
    """Repeat the last user message verbatim (smoke tests of a task's plumbing)."""
    return last_user_text(input)


@scripted_policy("fixed")
def fixed(
    input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig, args: dict[str, Any]
) -> PolicyResult:
    """Answer ``-M answer=...`` (default: empty); ``-M submit=true`` answers via ``submit()``."""
    answer = arg_str(args, "answer")
    if args.get("submit"):
        return _answer_or_submit(answer, input, tools, args)
    return answer


@scripted_policy("submit")
def submit(
    input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig, args: dict[str, Any]
) -> PolicyResult:
    """Call ``submit(answer=-M answer)`` at once if offered, else answer in text (react())."""
    return _answer_or_submit(arg_str(args, "answer"), input, tools, args)


@scripted_policy("tool-then-answer")
def tool_then_answer(
    input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig, args: dict[str, Any]
) -> PolicyResult:
    """Call ``-M tool=NAME`` with ``-M arguments=JSON``, then answer with the tool's result.

    Without ``tool`` the first offered tool that is not ``submit`` is called. The answer is
    ``-M template=...`` formatted with ``{result}`` (default: the bare result) and goes
    through ``submit()`` when that tool is offered.
    """
    submit_name = arg_str(args, "submit_tool", "submit")
    name = arg_str(args, "tool") or next((t.name for t in tools if t.name != submit_name), "")
    if not name:
        raise ValueError("tool-then-answer: no tool offered and no -M tool=NAME given")
    results = [m for m in input if isinstance(m, ChatMessageTool) and m.function == name]
    if not results:
        arguments = arg_json(args, "arguments") or {}
        if not isinstance(arguments, dict):
            raise ValueError(f"tool-then-answer: -M arguments must be a JSON object: {arguments!r}")
        return tool_call(name, arguments, input)
    last = results[-1]
    result = last.error.message if last.error else last.text
    template = arg_str(args, "template", "{result}")
    return _answer_or_submit(template.format(result=result), input, tools, args)


@scripted_policy("sequence")
def sequence(
    input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig, args: dict[str, Any]
) -> PolicyResult:
    """Play ``-M steps=JSON`` one per assistant turn, then repeat the last step.

    Each step is a string (plain answer) or ``{"tool": NAME, "arguments": {...}}``; a
    string step containing ``{last}`` gets the most recent tool result substituted. This
    scripts any agent trajectory, e.g. two tool calls then a submit.
    """
    steps = arg_json(args, "steps")
    if not isinstance(steps, list) or not steps:
        raise ValueError("sequence: -M steps must be a non-empty JSON list")
    step = steps[min(turn_index(input), len(steps) - 1)]
    if isinstance(step, dict):
        return tool_call(str(step["tool"]), dict(step.get("arguments", {})), input)
    last = next((m.text for m in reversed(input) if isinstance(m, ChatMessageTool)), "")
    return str(step).replace("{last}", last)


@scripted_policy("chatter")
def chatter(
    input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig, args: dict[str, Any]
) -> PolicyResult:
    """Never call a tool: says ``turn N`` every time (tests react()'s on_continue and limits)."""
    return f"turn {turn_index(input)}"


@scripted_policy("refuse")
def refuse(
    input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig, args: dict[str, Any]
) -> PolicyResult:
    """Refuse with ``stop_reason="content_filter"`` (tests refusal handling and scoring)."""
    text = arg_str(args, "message", "I can't help with that.")
    return ModelOutput.from_content(model="", content=text, stop_reason="content_filter")


@scripted_policy("malformed")
def malformed(
    input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig, args: dict[str, Any]
) -> PolicyResult:
    """Emit a tool call that failed to parse, so Inspect returns a parsing error to the model.

    After ``-M times=N`` (default 1) malformed turns it falls back to answering
    ``-M answer`` (through ``submit()`` if offered), so an agent loop terminates.
    """
    bad_turns = sum(
        1
        for m in input
        if isinstance(m, ChatMessageAssistant) and any(c.parse_error for c in (m.tool_calls or []))
    )
    if bad_turns >= int(args.get("times", 1)):
        return _answer_or_submit(arg_str(args, "answer"), input, tools, args)
    name = arg_str(args, "tool") or (tools[0].name if tools else "missing_tool")
    raw = '{"arguments": {"x": 1'  # truncated JSON, as a small model might emit
    call = tool_call(name, {}, input)
    call.parse_error = f"Error parsing the following tool call arguments:\n\n{raw}\n\n"
    return [call]


@scripted_policy("unknown-tool")
def unknown_tool(
    input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig, args: dict[str, Any]
) -> PolicyResult:
    """Call a tool that was not offered once, then answer (tests Inspect's unknown-tool path)."""
    if any(isinstance(m, ChatMessageTool) for m in input):
        return _answer_or_submit(arg_str(args, "answer"), input, tools, args)
    return tool_call(arg_str(args, "tool", "no_such_tool"), {}, input)


# ----------------------------------------------------------------------------- the ModelAPI


def _to_output(result: PolicyResult, model: str) -> ModelOutput:
    if isinstance(result, ModelOutput):
        result.model = result.model or model  # policies don't know their model name
        return result
    if isinstance(result, str):
        return ModelOutput.from_content(model=model, content=result)
    calls = [result] if isinstance(result, ToolCall) else list(result)
    return assistant_output(model, "", calls, "tool_calls")


class ScriptedModelAPI(LocalModelAPI):
    """``scripted/<policy>``: runs a registered policy; never touches network or tiktoken."""

    provider = "scripted"

    def setup(self, policy_module: Any = None, **model_args: Any) -> None:
        """Import ``policy_module`` if given; every other ``-M`` arg goes to the policy."""
        if policy_module:  # an old module home resolves (harness.plugins.aliases)
            importlib.import_module(resolve(str(policy_module)))
        self.policy_args: dict[str, Any] = model_args
        # resolved lazily too, so policies registered after model creation still work
        entry = find("policy", self.model_name)
        self._policy: Policy | None = entry.obj if entry is not None else None

    def _resolve(self) -> Policy:
        if self._policy is None:
            self._policy = get_policy(self.model_name)
        return self._policy

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> tuple[ModelOutput, ModelCall]:
        """Run the policy and wrap its result as a ModelOutput with usage."""
        result = self._resolve()(input, tools, config, dict(self.policy_args))
        if inspect.isawaitable(result):
            result = await result
        output = _to_output(result, f"scripted/{self.model_name}")
        if output.usage is None:
            output.usage = _usage(input, tools, output)
        request = {
            "policy": self.model_name,
            "args": self.policy_args,
            "messages": [m.model_dump(exclude_none=True) for m in input],
            "tools": [t.name for t in tools],
        }
        return output, ModelCall.create(request, output.model_dump(exclude_none=True))

    async def count_text_tokens(self, text: str) -> int:
        """Whitespace rule (same as usage), so Inspect never falls back to tiktoken."""
        return count_words(text)

    def max_connections(self) -> int:
        """No remote service behind it: let every sample run concurrently."""
        return 1000
