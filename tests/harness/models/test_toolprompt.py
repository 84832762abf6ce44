"""The prompt-based tool-call format: rendering for the chat template and lenient parsing."""

from __future__ import annotations

import json

import pytest
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
)
from inspect_ai.tool import ToolCall, ToolFunction, ToolInfo, ToolParam, ToolParams

from harness.models.toolprompt import (
    call_schema,
    example_call,
    forced_prefix,
    forced_tools,
    parse_tool_calls,
    to_chat,
)

ADD = ToolInfo(
    name="add",
    description="Add two integers.",
    parameters=ToolParams(
        properties={"x": ToolParam(type="integer"), "y": ToolParam(type="integer")},
        required=["x", "y"],
    ),
)
ECHO = ToolInfo(name="echo", description="Echo text.", parameters=ToolParams())


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>{"name": "add", "arguments": {"x": 1, "y": 2}}</tool_call>',
        '<tool_call>\n{"name": "add", "arguments": {"x": 1, "y": 2}}\n',  # no closing tag
        '<tool_call>[{"name": "add", "arguments": {"x": 1, "y": 2}}]</tool_call>',  # a list
        '<tool_call>{"name": "add", "parameters": {"x": 1, "y": 2}}</tool_call>',
        '<tool_call>{"name": "add", "arguments": "{\\"x\\": 1, \\"y\\": 2}"}</tool_call>',
        '<tool_call>{"function": {"name": "add", "arguments": {"x": 1, "y": 2}}}</tool_call>',
        '{"name": "add", "arguments": {"x": 1, "y": 2}}',  # untagged, names an offered tool
        '```json\n{"name": "add", "arguments": {"x": 1, "y": 2}}\n```',
        '<tool_call>{"name": "add", "arguments": {"x": 1, "y": 2}} trailing</tool_call>',
    ],
)
def test_parses_the_forms_small_models_write(text: str) -> None:
    content, calls = parse_tool_calls(text, [ADD])
    assert [(c.function, c.arguments, c.parse_error) for c in calls] == [
        ("add", {"x": 1, "y": 2}, None)
    ]
    assert content == ""


def test_keeps_text_around_calls_and_several_calls() -> None:
    text = (
        'Let me add.\n<tool_call>{"name": "add", "arguments": {"x": 1, "y": 2}}</tool_call>'
        '<tool_call>{"name": "echo", "arguments": {}}</tool_call>'
    )
    content, calls = parse_tool_calls(text, [ADD, ECHO])
    assert content == "Let me add."
    assert [c.function for c in calls] == ["add", "echo"]
    assert len({c.id for c in calls}) == 2


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ('<tool_call>{"name": "add", "arguments": {"x": 1,</tool_call>', "add"),
        ("<tool_call>add(1, 2)</tool_call>", "unknown"),
        ('<tool_call>{"arguments": {"x": 1}}</tool_call>', "unknown"),
        ('<tool_call>{"name": "add", "arguments": [1, 2]}</tool_call>', "add"),
    ],
)
def test_malformed_calls_carry_a_parse_error(text: str, name: str) -> None:
    _, calls = parse_tool_calls(text, [ADD])
    assert len(calls) == 1
    assert calls[0].function == name
    assert calls[0].parse_error and "Error parsing tool call" in calls[0].parse_error


def test_plain_answers_and_json_data_are_not_calls() -> None:
    assert parse_tool_calls("The answer is 3.", [ADD]) == ("The answer is 3.", [])
    data = '{"name": "Paris", "country": "France"}'  # JSON, but names no offered tool
    assert parse_tool_calls(data, [ADD]) == (data, [])
    assert parse_tool_calls('{"name": "add", "arguments": {}}', []) == (
        '{"name": "add", "arguments": {}}',
        [],
    )


def test_to_chat_describes_tools_and_replays_calls_and_results() -> None:
    call = ToolCall(id="c1", function="add", arguments={"x": 1, "y": 2})
    chat = to_chat(
        [
            ChatMessageSystem(content="Be brief."),
            ChatMessageUser(content="1+2?"),
            ChatMessageAssistant(content="", tool_calls=[call]),
            ChatMessageTool(content="3", tool_call_id="c1", function="add"),
        ],
        [ADD],
        "auto",
    )
    assert [m["role"] for m in chat] == ["system", "user", "assistant", "user"]
    assert chat[0]["content"].startswith("Be brief.")
    assert (
        json.dumps({"name": "add", "description": "Add two integers."})[:-1] in chat[0]["content"]
    )
    # the replayed call parses back to the same call: the model sees its own format
    _, replayed = parse_tool_calls(chat[2]["content"], [ADD])
    assert (replayed[0].function, replayed[0].arguments) == ("add", {"x": 1, "y": 2})
    assert "<tool_response" in chat[3]["content"] and "3" in chat[3]["content"]


def test_tool_choice_none_hides_tools() -> None:
    chat = to_chat([ChatMessageUser(content="hi")], [ADD], "none")
    assert chat == [{"role": "user", "content": "hi"}]


def test_forced_tools_and_schema() -> None:
    assert forced_tools([ADD, ECHO], "auto") == []
    assert forced_tools([ADD, ECHO], "any") == [ADD, ECHO]
    assert forced_tools([ADD, ECHO], ToolFunction(name="echo")) == [ECHO]
    one = call_schema([ADD])
    assert one["properties"]["name"] == {"const": "add"}
    assert one["properties"]["arguments"]["required"] == ["x", "y"]
    assert len(call_schema([ADD, ECHO])["oneOf"]) == 2


def test_example_call_is_valid_json_the_parser_accepts() -> None:
    example = example_call(ADD)
    assert json.loads(example) == {"name": "add", "arguments": {"x": 1, "y": 1}}
    _, calls = parse_tool_calls(f"<tool_call>{example}</tool_call>", [ADD])
    assert calls[0].parse_error is None


def test_forced_prefix_completes_to_a_parseable_call() -> None:
    one = forced_prefix([ADD])
    _, calls = parse_tool_calls(one + '"x": 2, "y": 3}}', [ADD])
    assert (calls[0].function, calls[0].arguments) == ("add", {"x": 2, "y": 3})
    many = forced_prefix([ADD, ECHO])
    _, calls = parse_tool_calls(many + 'echo", "arguments": {}}', [ADD, ECHO])
    assert calls[0].function == "echo"


@pytest.mark.parametrize(
    "text",
    [
        # the habits of Qwen2.5-Coder 0.5B/1.5B seen here: fenced block inside prose,
        # a call wrapped in the result tags, bare JSON after a sentence
        'I will add them.\n```json\n{"name": "add", "arguments": {"x": 1, "y": 2}}\n```',
        '<tool_response>\n{"name": "add", "arguments": {"x": 1, "y": 2}}\n</tool_response>',
        'Sure: {"name": "add", "arguments": {"x": 1, "y": 2}}',
    ],
)
def test_untagged_calls_anywhere_in_the_reply(text: str) -> None:
    content, calls = parse_tool_calls(text, [ADD])
    assert [(c.function, c.arguments, c.parse_error) for c in calls] == [
        ("add", {"x": 1, "y": 2}, None)
    ]
    assert "{" not in content and "tool_response" not in content and "```" not in content


def test_untagged_call_that_does_not_decode_is_returned_as_malformed() -> None:
    content, calls = parse_tool_calls('Calling: {"name": "add", "arguments": {"x": 1,', [ADD])
    assert content == "Calling:"
    assert len(calls) == 1 and calls[0].function == "add" and calls[0].parse_error


def test_json_naming_no_offered_tool_stays_text() -> None:
    text = 'Result was {"status": "ok", "name": "survey"}.'
    assert parse_tool_calls(text, [ADD]) == (text, [])


def test_native_messages_and_wire_messages_agree() -> None:
    from harness.models.toolprompt import native_messages, wire_messages

    call = ToolCall(id="c1", function="add", arguments={"x": 1, "y": 2})
    inspect_side = native_messages([
        ChatMessageUser(content="1+2?"),
        ChatMessageAssistant(content="", tool_calls=[call]),
        ChatMessageTool(content="3", tool_call_id="c1", function="add"),
    ])
    wire_side = wire_messages([
        {"role": "user", "content": [{"type": "text", "text": "1+2?"}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "add", "arguments": '{"x": 1, "y": 2}'}}]},
        {"role": "tool", "tool_call_id": "c1", "name": "add", "content": "3"},
    ])
    assert inspect_side == wire_side


def test_nested_objects_of_a_cut_off_echo_are_not_calls() -> None:
    """A small model echoing a tool result that names a tool inside, cut off mid-way: the
    nested object must not become a call."""
    echo = ('{\n "status": "ok",\n "history": [\n  {"name": "add", "arguments": {"x": 1, '
            '"y": 2}},\n  {"name": "echo"')
    content, calls = parse_tool_calls(echo, [ADD, ECHO])
    assert calls == [] or all(c.parse_error for c in calls)
    assert not [c for c in calls if c.parse_error is None]
    # a complete echo naming no tool at its top level is plain text as well
    whole = '{"status": "ok", "last": {"name": "add", "arguments": {"x": 1, "y": 2}}}'
    assert parse_tool_calls(whole, [ADD]) == (whole, [])


@pytest.mark.parametrize(
    "text",
    [
        # Qwen2.5's chat template shows its example call with doubled braces, and the 1.5B
        # copies them (64 of react's 121 call-less replies in lightwm_household_1p5b)
        'I will add them.\n{{"name": "add", "arguments": {{"x": 1, "y": 2}}}}',
        '<tool_call>\n{{"name": "add", "arguments": {{"x": 1, "y": 2}}}}\n</tool_call>',
    ],
)
def test_a_call_with_the_templates_doubled_braces_is_read(text: str) -> None:
    content, calls = parse_tool_calls(text, [ADD])
    assert [(c.function, c.arguments, c.parse_error) for c in calls] == [
        ("add", {"x": 1, "y": 2}, None)
    ]
    assert "{" not in content


def test_doubled_braces_naming_no_offered_tool_stay_text() -> None:
    text = 'A template: {{"status": "ok"}}.'
    assert parse_tool_calls(text, [ADD]) == (text.strip(), [])
