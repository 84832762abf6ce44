"""The Game-of-24 task: a record as chat turns (1.1.0) or as the 1.0.0 single text."""

from __future__ import annotations

import pytest
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

from benchmarks.probes.game24 import game24, record_to_sample
from environments.probes.game24 import make_item, render_prompt


def test_a_record_becomes_chat_turns_ending_with_the_puzzle() -> None:
    record = make_item(3, seed=0, size=3).record()
    sample = record_to_sample(record)
    assert sample.id == record["id"] and sample.target == record["solution"]
    messages = sample.input
    assert isinstance(messages, list)
    assert [type(m) for m in messages] == [
        ChatMessageSystem, ChatMessageUser, ChatMessageAssistant, ChatMessageUser,
        ChatMessageAssistant, ChatMessageUser]
    assert messages[-1].text == "Numbers: " + " ".join(map(str, record["numbers"]))
    assert sample.metadata == {"numbers": list(record["numbers"]),
                               "n_solutions": record["n_solutions"]}


def test_the_text_form_is_the_first_versions_prompt_and_others_are_refused() -> None:
    record = make_item(3, seed=0, size=3).record()
    assert record_to_sample(record, "text").input == render_prompt(record["numbers"])
    with pytest.raises(ValueError, match="prompt must be one of"):
        record_to_sample(record, "json")


def test_the_task_ids_are_stable_and_the_version_names_the_prompt_change() -> None:
    task = game24(n=4, seed=2)
    assert [s.id for s in task.dataset] == ["2-0", "2-1", "2-2", "2-3"]
    assert task.version == "1.1.0"
    assert game24(n=4, seed=2, prompt="text").dataset[0].input == render_prompt(
        task.dataset[0].metadata["numbers"])  # type: ignore[index]
