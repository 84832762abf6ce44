"""Tool calling for small local chat models: a prompt format they can follow and a lenient parser.

Local GGUF / HF models have no native function-calling API, so the tools are described in the
system prompt and the model is asked to answer a call as one JSON object inside tags::

    <tool_call>{"name": "add", "arguments": {"x": 1, "y": 2}}</tool_call>

Earlier calls are replayed in the same format and tool results come back as user turns
wrapped in ``<tool_response>`` so any ChatML-style template renders them. The parser
accepts what a 135M model actually writes (missing closing tag, a JSON list of calls,
``parameters`` for ``arguments``, arguments as a JSON string, a bare JSON object without
tags); anything else becomes a ``ToolCall`` with ``parse_error`` so Inspect hands the
error back to the model instead of failing the sample.

Pure Python (no llama/torch): shared by the ``embedded`` and ``whitebox`` providers.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
)
from inspect_ai.tool import ToolCall, ToolChoice, ToolFunction, ToolInfo

OPEN_TAG = "<tool_call>"
CLOSE_TAG = "</tool_call>"

_TOOLS_PROMPT = """You can call the following tools (JSON Schema of their arguments):
{tools}

To call a tool, answer with only a JSON object inside {open} {close} tags, for example:
{open}{example}{close}
The result will be given back to you inside <tool_response></tool_response> tags.
If no tool is needed, answer normally."""


def tool_spec(tool: ToolInfo) -> dict[str, Any]:
    """The JSON description of one tool shown to the model."""
    return {
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters.model_dump(exclude_none=True),
    }


_SAMPLE_VALUES: dict[str, Any] = {
    "integer": 1,
    "number": 1.5,
    "string": "text",
    "boolean": True,
    "array": [],
    "object": {},
}


def example_call(tool: ToolInfo) -> str:
    """A valid JSON call of ``tool`` with typed sample values: small models copy the example
    literally, so a ``{...}`` placeholder would come back as invalid JSON."""
    args = {
        name: _SAMPLE_VALUES.get(str(param.type), "value")
        for name, param in tool.parameters.properties.items()
    }
    return json.dumps({"name": tool.name, "arguments": args})


def tools_prompt(tools: list[ToolInfo]) -> str:
    """System-prompt paragraph that lists ``tools`` and the call format."""
    listing = "\n".join(json.dumps(tool_spec(t)) for t in tools)
    return _TOOLS_PROMPT.format(
        tools=listing, open=OPEN_TAG, close=CLOSE_TAG, example=example_call(tools[0])
    )


def forced_prefix(tools: list[ToolInfo]) -> str:
    """Reply prefix that commits the model to a call: the tag, plus the name when only one
    tool is allowed (a grammar-free constraint for backends without JSON grammars)."""
    if len(tools) == 1:
        return OPEN_TAG + '{"name": ' + json.dumps(tools[0].name) + ', "arguments": {'
    return OPEN_TAG + '{"name": "'


def render_call(call: ToolCall) -> str:
    """An earlier tool call, in the same format the model is asked to produce."""
    body = json.dumps({"name": call.function, "arguments": call.arguments})
    return f"{OPEN_TAG}{body}{CLOSE_TAG}"


def to_chat(
    input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice
) -> list[dict[str, str]]:
    """Inspect messages -> ``[{"role", "content"}]`` for a chat template, tools in the system.

    With ``tool_choice="none"`` the tools are not described (the model cannot call them).
    """
    described = tools if tool_choice != "none" else []
    system = [m.text for m in input if isinstance(m, ChatMessageSystem)]
    if described:
        system.append(tools_prompt(described))
    chat: list[dict[str, str]] = []
    if system:
        chat.append({"role": "system", "content": "\n\n".join(system)})
    for message in input:
        if isinstance(message, ChatMessageSystem):
            continue
        if isinstance(message, ChatMessageAssistant):
            parts = [message.text] if message.text else []
            parts += [render_call(c) for c in message.tool_calls or []]
            chat.append({"role": "assistant", "content": "\n".join(parts)})
        elif isinstance(message, ChatMessageTool):
            result = message.error.message if message.error else message.text
            body = f'<tool_response name="{message.function}">\n{result}\n</tool_response>'
            chat.append({"role": "user", "content": body})
        else:
            chat.append({"role": "user", "content": message.text})
    return chat


def forced_tools(tools: list[ToolInfo], tool_choice: ToolChoice) -> list[ToolInfo]:
    """Tools the model *must* pick from (``any`` or a named function); [] when free."""
    if isinstance(tool_choice, ToolFunction):
        return [t for t in tools if t.name == tool_choice.name]
    if tool_choice == "any":
        return list(tools)
    return []


def call_schema(tools: list[ToolInfo]) -> dict[str, Any]:
    """JSON Schema of one call to any of ``tools`` (to constrain decoding with a grammar)."""
    options = [
        {
            "type": "object",
            "properties": {
                "name": {"const": t.name},
                "arguments": t.parameters.model_dump(exclude_none=True),
            },
            "required": ["name", "arguments"],
        }
        for t in tools
    ]
    return options[0] if len(options) == 1 else {"oneOf": options}


# ----------------------------------------------------------------------------- parsing

_BLOCK = re.compile(re.escape(OPEN_TAG) + r"(.*?)(?:" + re.escape(CLOSE_TAG) + r"|$)", re.S)
_NAME_KEYS = ("name", "function", "tool", "tool_name")
_ARG_KEYS = ("arguments", "parameters", "args", "input")


def _call_id() -> str:
    return f"call_{uuid.uuid4().hex[:12]}"


def _decode_first(text: str) -> Any:
    """Decode the first JSON object or list in ``text``; ignores trailing junk."""
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        raise ValueError("no JSON object found")
    value, _ = json.JSONDecoder().raw_decode(text[min(starts) :])
    return value


def _to_call(obj: Any, raw: str) -> ToolCall:
    if not isinstance(obj, dict):
        return _error_call(raw, f"expected a JSON object, got {type(obj).__name__}")
    if isinstance(obj.get("function"), dict):  # OpenAI style {"function": {"name", "arguments"}}
        obj = obj["function"]
    name = next((obj[k] for k in _NAME_KEYS if isinstance(obj.get(k), str)), None)
    if not name:
        return _error_call(raw, 'missing "name"')
    args: Any = next((obj[k] for k in _ARG_KEYS if k in obj), {})
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError as ex:
            return _error_call(raw, f"arguments are not valid JSON: {ex}", name)
    if not isinstance(args, dict):
        return _error_call(raw, '"arguments" must be a JSON object', name)
    return ToolCall(id=_call_id(), function=name, arguments=args)


def _error_call(raw: str, why: str, name: str | None = None) -> ToolCall:
    message = f'Error parsing tool call ({why}). Expected {OPEN_TAG}{{"name": ..., '
    message += f'"arguments": {{...}}}}{CLOSE_TAG}. Got:\n{raw.strip()}'
    return ToolCall(id=_call_id(), function=name or "unknown", arguments={}, parse_error=message)


def _parse_block(raw: str) -> list[ToolCall]:
    try:
        value = _decode_first(raw)
    except ValueError as ex:  # JSONDecodeError is a ValueError
        name = re.search(r'"name"\s*:\s*"([^"]+)"', raw)
        return [_error_call(raw, str(ex), name.group(1) if name else None)]
    items = value if isinstance(value, list) else [value]
    return [_to_call(item, raw) for item in items] or [_error_call(raw, "empty list")]


def parse_tool_calls(text: str, tools: list[ToolInfo]) -> tuple[str, list[ToolCall]]:
    """Split generated ``text`` into (visible content, tool calls).

    Tagged blocks are always parsed; an untagged reply is taken as a call only when it is a
    single JSON object naming an offered tool (small models often drop the tags).
    """
    blocks = list(_BLOCK.finditer(text))
    if blocks:
        calls = [c for b in blocks for c in _parse_block(b.group(1))]
        return _BLOCK.sub("", text).strip(), calls
    stripped = text.strip().removeprefix("```json").removeprefix("```").removesuffix("```")
    if tools and stripped.strip().startswith("{"):
        try:
            obj = json.loads(stripped)
        except json.JSONDecodeError:
            return text.strip(), []
        names = {t.name for t in tools}
        if isinstance(obj, dict) and any(obj.get(k) in names for k in _NAME_KEYS):
            return "", [_to_call(obj, stripped)]
    return text.strip(), []
