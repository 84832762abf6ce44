"""reply_formats: replies without a tool call, and the template's doubled-brace form among them."""

from __future__ import annotations

from typing import Any

from methods.lightwm.reply_formats import count_replies, render


def test_count_replies_separates_calls_plain_text_and_doubled_braces() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "rules"},
        {"role": "user", "content": "goal"},
        {"role": "assistant", "content": "",
         "tool_calls": [{"function": "go", "arguments": {"target": "kitchen"}}]},
        {"role": "tool", "content": "You go to the kitchen."},
        {"role": "assistant", "content": '{{"name": "take", "arguments": {"item": "mug 1"}}}'},
        {"role": "assistant", "content": [{"type": "text", "text": 'x {{"name": "put"}}'}]},
        {"role": "assistant", "content": "I am done."},
    ]
    assert count_replies(messages) == {"replies": 4, "no_call": 3, "doubled_braces": 2}
    table = render({"react": {"samples": 1, "replies": 4, "no_call": 3, "doubled_braces": 2}})
    assert "| react | 1 | 4 | 3 (75%) | 2 |" in table
