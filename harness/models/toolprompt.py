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


def openai_tools(tools: list[ToolInfo]) -> list[dict[str, Any]]:
    """``tools`` in the OpenAI wire shape that chat templates with a tools block expect."""
    return [{"type": "function", "function": tool_spec(t)} for t in tools]


_SAMPLE_VALUES: dict[str, Any] = {
    "integer": 1,
    "number": 1.5,
    "string": "text",
    "boolean": True,
    "array": [],
    "object": {},
}


def example_call(tool: ToolInfo | dict[str, Any]) -> str:
    """A valid JSON call of ``tool`` with typed sample values: small models copy the example
    literally, so a ``{...}`` placeholder would come back as invalid JSON."""
    spec = tool_spec(tool) if isinstance(tool, ToolInfo) else tool
    properties = spec.get("parameters", {}).get("properties", {})
    args = {
        name: _SAMPLE_VALUES.get(str(param.get("type")), "value")
        for name, param in properties.items()
    }
    return json.dumps({"name": spec["name"], "arguments": args})


def tools_prompt(tools: list[ToolInfo] | list[dict[str, Any]]) -> str:
    """System-prompt paragraph that lists ``tools`` and the call format."""
    specs = [tool_spec(t) if isinstance(t, ToolInfo) else t for t in tools]
    listing = "\n".join(json.dumps(s) for s in specs)
    return _TOOLS_PROMPT.format(
        tools=listing, open=OPEN_TAG, close=CLOSE_TAG, example=example_call(specs[0])
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


# ------------------------------------------------------------------ messages for a template
#
# One message shape for every backend: OpenAI-style dicts (role, content as text,
# ``tool_calls`` with ``function.arguments`` as a dict, ``tool_call_id``/``name`` on tool
# results). Inspect's messages (``native_messages``) and an OpenAI request's JSON
# (``wire_messages``) both become it; a template with a tools block renders it as is, and
# ``fallback_messages`` turns it into plain user/assistant text for a template without one.


def native_messages(input: list[ChatMessage]) -> list[dict[str, Any]]:
    """Inspect messages as OpenAI-style dicts; a failed tool's error is its result text."""
    out: list[dict[str, Any]] = []
    for message in input:
        if isinstance(message, ChatMessageSystem):
            out.append({"role": "system", "content": message.text})
        elif isinstance(message, ChatMessageAssistant):
            entry: dict[str, Any] = {"role": "assistant", "content": message.text or ""}
            if message.tool_calls:
                entry["tool_calls"] = [
                    {"id": c.id, "type": "function",
                     "function": {"name": c.function, "arguments": c.arguments}}
                    for c in message.tool_calls
                ]
            out.append(entry)
        elif isinstance(message, ChatMessageTool):
            result = message.error.message if message.error else message.text
            out.append({"role": "tool", "content": result, "name": message.function or "",
                        "tool_call_id": message.tool_call_id or ""})
        else:
            out.append({"role": "user", "content": message.text})
    return out


def _wire_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = [p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"]
    return "\n".join(parts)


def wire_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An OpenAI request's ``messages`` in the shape above (text content; arguments decoded
    from their JSON string; a call whose arguments do not decode keeps them as a string)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role", "user")
        role = "system" if role == "developer" else role
        entry: dict[str, Any] = {"role": role, "content": _wire_text(message.get("content"))}
        if role == "assistant" and message.get("tool_calls"):
            calls = []
            for call in message["tool_calls"]:
                function = call.get("function", {})
                arguments: Any = function.get("arguments") or {}
                if isinstance(arguments, str):
                    try:
                        arguments = json.loads(arguments) if arguments.strip() else {}
                    except json.JSONDecodeError:
                        pass
                calls.append({"id": call.get("id", ""), "type": "function",
                              "function": {"name": function.get("name", ""),
                                           "arguments": arguments}})
            entry["tool_calls"] = calls
        if role == "tool":
            entry["tool_call_id"] = message.get("tool_call_id", "")
            entry["name"] = message.get("name", "")
        out.append(entry)
    return out


def fallback_messages(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]]
) -> list[dict[str, str]]:
    """For a template with no tools block: the tools described in the system turn, earlier
    calls replayed as tagged JSON and results as user turns wrapped in ``<tool_response>``
    (a format distinct from the call's, so the model never copies one for the other)."""
    specs = [t.get("function", t) for t in tools]
    system = [m["content"] for m in messages if m["role"] == "system"]
    if specs:
        system.append(tools_prompt(specs))
    chat: list[dict[str, str]] = []
    if system:
        chat.append({"role": "system", "content": "\n\n".join(system)})
    for message in messages:
        if message["role"] == "system":
            continue
        if message["role"] == "assistant":
            parts = [message["content"]] if message.get("content") else []
            for call in message.get("tool_calls") or []:
                function = call["function"]
                body = json.dumps({"name": function["name"], "arguments": function["arguments"]})
                parts.append(f"{OPEN_TAG}{body}{CLOSE_TAG}")
            chat.append({"role": "assistant", "content": "\n".join(parts)})
        elif message["role"] == "tool":
            body = f'<tool_response name="{message.get("name", "")}">\n'
            body += f'{message["content"]}\n</tool_response>'
            chat.append({"role": "user", "content": body})
        else:
            chat.append({"role": "user", "content": message["content"]})
    return chat


def to_chat(
    input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice
) -> list[dict[str, str]]:
    """Inspect messages -> ``[{"role", "content"}]`` for a template without a tools block.

    With ``tool_choice="none"`` the tools are not described (the model cannot call them).
    """
    described = tools if tool_choice != "none" else []
    return fallback_messages(native_messages(input), openai_tools(described))


def forced_tools(tools: list[ToolInfo], tool_choice: ToolChoice) -> list[ToolInfo]:
    """Tools the model *must* pick from (``any`` or a named function); [] when free."""
    if isinstance(tool_choice, ToolFunction):
        return [t for t in tools if t.name == tool_choice.name]
    if tool_choice == "any":
        return list(tools)
    return []


def call_schema(tools: list[ToolInfo] | list[dict[str, Any]]) -> dict[str, Any]:
    """JSON Schema of one call to any of ``tools`` (to constrain decoding with a grammar)."""
    specs = [tool_spec(t) if isinstance(t, ToolInfo) else t.get("function", t) for t in tools]
    options = [
        {
            "type": "object",
            "properties": {
                "name": {"const": s["name"]},
                "arguments": s.get("parameters") or {"type": "object"},
            },
            "required": ["name", "arguments"],
        }
        for s in specs
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


def _undouble(text: str) -> str:
    """``{{ ... }}`` read as ``{ ... }``: Qwen2.5's chat template shows its example call with
    the braces doubled (a template-escaping artefact) and small Qwen models copy it; tried
    only where the text as written holds no call."""
    return text.replace("{{", "{").replace("}}", "}")


def _parse_block(raw: str) -> list[ToolCall]:
    try:
        value = _decode_first(raw)
    except ValueError as ex:  # JSONDecodeError is a ValueError
        try:  # the template's doubled braces, copied (see _undouble)
            value = _decode_first(_undouble(raw))
        except ValueError:
            name = re.search(r'"name"\s*:\s*"([^"]+)"', raw)
            return [_error_call(raw, str(ex), name.group(1) if name else None)]
    items = value if isinstance(value, list) else [value]
    return [_to_call(item, raw) for item in items] or [_error_call(raw, "empty list")]


def _offered(tools: list[ToolInfo] | list[str]) -> set[str]:
    return {t if isinstance(t, str) else t.name for t in tools}


def _names_offered(obj: Any, names: set[str]) -> bool:
    """Whether a decoded JSON value is a call (or a list of calls) of an offered tool."""
    items = obj if isinstance(obj, list) else [obj]
    for item in items:
        if not isinstance(item, dict):
            return False
        if isinstance(item.get("function"), dict):
            item = item["function"]
        if not any(item.get(k) in names for k in _NAME_KEYS):
            return False
    return bool(items)


def _untagged_calls(text: str, names: set[str]) -> tuple[str, list[ToolCall]]:
    """Calls written without ``<tool_call>`` tags: a JSON object (or list of them) naming an
    offered tool, bare, in a fenced block or (a habit of small Qwen models) inside
    ``<tool_response>`` tags. Their spans are cut from the visible text."""
    decoder = json.JSONDecoder()
    calls: list[ToolCall] = []
    spans: list[tuple[int, int]] = []
    # Only a value at nesting depth 0 can be a call: an echoed tool result that was cut off
    # (so it does not decode) must not have its nested objects read as calls.
    depth, in_string, escaped, i = 0, False, False, 0
    while i < len(text):
        char = text[i]
        if in_string:
            escaped = char == "\\" and not escaped
            in_string = escaped or char != '"'
        elif char == '"':
            in_string = depth > 0
        elif char in "{[" and depth == 0:
            try:
                value, end = decoder.raw_decode(text, i)
            except ValueError:
                depth = 1  # a value that does not decode: skip what it nests
                i += 1
                continue
            if _names_offered(value, names):
                raw = text[i:end]
                calls += [_to_call(item, raw) for item in (value if isinstance(value, list)
                                                           else [value])]
                spans.append((i, end))
            i = end
            continue
        elif char in "{[":
            depth += 1
        elif char in "}]" and depth > 0:
            depth -= 1
        i += 1
    if not calls:
        return text.strip(), []
    kept, last = [], 0
    for start, end in spans:
        kept.append(text[last:start])
        last = end
    kept.append(text[last:])
    content = "".join(kept)
    content = _WRAPPERS.sub("", content)
    return content.strip(), calls


_WRAPPERS = re.compile(r"```(?:json)?\s*```|<tool_response>\s*</tool_response>|</?tool_response>")
_ATTEMPT = re.compile(r'"(?:name|function)"\s*:\s*"([^"]+)"')


def parse_tool_calls(text: str, tools: list[ToolInfo] | list[str]) -> tuple[str, list[ToolCall]]:
    """Split generated ``text`` into (visible content, tool calls).

    Tagged blocks are always parsed (a block that does not decode becomes a call with a
    ``parse_error``, which Inspect returns to the model). Without tags, a JSON object naming
    an offered tool counts as a call wherever it sits (bare, fenced, or wrapped in
    ``<tool_response>``); text that names an offered tool in a call's shape but does not
    decode is a malformed call, so the model is told instead of the turn ending silently.
    """
    blocks = list(_BLOCK.finditer(text))
    if blocks:
        calls = [c for b in blocks for c in _parse_block(b.group(1))]
        return _BLOCK.sub("", text).strip(), calls
    names = _offered(tools)
    if not names:
        return text.strip(), []
    content, calls = _untagged_calls(text, names)
    if calls:
        return content, calls
    if "{{" in text:  # the template's doubled braces, copied (see _undouble)
        content, calls = _untagged_calls(_undouble(text), names)
        if calls:
            return content, calls
    attempt = _ATTEMPT.search(text)
    if attempt and attempt.group(1) in names and "{" in text[: attempt.start()]:
        start = text.rfind("{", 0, attempt.start())
        if _depth_at(text, start) == 0:  # the name sits in a top-level object: an attempt
            return text[:start].strip(), [
                _error_call(text[start:], "the JSON does not decode", attempt.group(1))
            ]
    return text.strip(), []


def _depth_at(text: str, pos: int) -> int:
    """Brace/bracket nesting depth at ``pos`` (outside JSON strings)."""
    depth, in_string, escaped = 0, False, False
    for char in text[:pos]:
        if in_string:
            escaped = char == "\\" and not escaped
            in_string = escaped or char != '"'
        elif char == '"':
            in_string = depth > 0  # quotes in prose around the JSON are not strings
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth = max(0, depth - 1)
    return depth
