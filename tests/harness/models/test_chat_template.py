"""The model's own chat template, rendered as transformers renders it (tools block included)."""

from __future__ import annotations

import json

from harness.models.chat_template import ChatTemplate

# the tools-relevant part of Qwen2.5's template, in its own structure (system + tools block,
# calls replayed as <tool_call> JSON, results grouped in one user turn)
QWEN_LIKE = """{%- if tools %}<|im_start|>system
{{ messages[0].content if messages[0].role == 'system' else 'Default.' }}
<tools>
{%- for tool in tools %}
{{ tool | tojson }}
{%- endfor %}
</tools><|im_end|>
{% endif %}
{%- for message in messages %}
{%- if message.role == 'user' or (message.role == 'system' and not tools) %}
<|im_start|>{{ message.role }}
{{ message.content }}<|im_end|>
{%- elif message.role == 'assistant' %}
<|im_start|>assistant
{{ message.content }}
{%- for tool_call in message.tool_calls or [] %}
<tool_call>
{"name": "{{ tool_call.function.name }}", "arguments": {{ tool_call.function.arguments | tojson }}}
</tool_call>
{%- endfor %}<|im_end|>
{%- elif message.role == 'tool' %}
<|im_start|>user
<tool_response>
{{ message.content }}
</tool_response><|im_end|>
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
<|im_start|>assistant
{% endif %}"""

TOOLS = [{"type": "function", "function": {
    "name": "add", "description": "Add <two> & more", "parameters": {
        "type": "object", "properties": {"y": {"type": "integer"}, "x": {"type": "integer"}}}}}]


def test_tools_render_as_plain_json_in_insertion_order() -> None:
    template = ChatTemplate(QWEN_LIKE, eos_token="<|im_end|>")
    assert template.supports_tools
    text = template.render([{"role": "user", "content": "1+2?"}], TOOLS)
    # no HTML escaping of < > & and no key sorting (Jinja's built-in tojson does both)
    assert json.dumps(TOOLS[0]) in text
    assert text.endswith("<|im_start|>assistant\n")


def test_calls_and_results_replay_in_distinct_formats() -> None:
    template = ChatTemplate(QWEN_LIKE, eos_token="<|im_end|>")
    text = template.render([
        {"role": "user", "content": "1+2?"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "add",
                                                          "arguments": {"x": 1, "y": 2}}}]},
        {"role": "tool", "content": "3", "tool_call_id": "c1", "name": "add"},
    ], TOOLS)
    assert '<tool_call>\n{"name": "add", "arguments": {"x": 1, "y": 2}}\n</tool_call>' in text
    assert "<tool_response>\n3\n</tool_response>" in text


def test_chatml_fallback_has_no_tools_block() -> None:
    template = ChatTemplate(None, eos_token="<|im_end|>")
    assert not template.supports_tools
    assert template.render([{"role": "user", "content": "hi"}]) == (
        "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n")
    assert template.stops() == ["<|im_end|>"]
