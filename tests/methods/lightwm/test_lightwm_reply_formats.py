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


def test_a_copied_log_is_counted_once(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Each sample once, as the study's report counts it, however often a log was copied."""
    import shutil
    from pathlib import Path

    from methods.lightwm.reply_formats import by_agent

    logs = sorted((Path(__file__).resolve().parents[3]
                   / "methods/studies/lightwm_household_1p5b/logs/main").glob("*.eval"))[:1]
    shutil.copy(logs[0], tmp_path / logs[0].name)
    once = by_agent(tmp_path)
    shutil.copy(logs[0], tmp_path / ("copy-" + logs[0].name))
    assert by_agent(tmp_path) == once and sum(v["samples"] for v in once.values()) > 0
