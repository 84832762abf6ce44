"""Inspect's standard agent tools, ``text_editor()`` and ``bash_session()``, on bwrap.

A react agent on a scripted model (``mockllm`` with fixed tool calls, usage set so that
nothing reaches for tiktoken offline) keeps one bash session across calls (its cwd and
variables persist), edits files with the text editor, and submits; the scorer reads what
the tools left in the sample. Inspect finds its tool support already provided read-only,
so nothing is injected or downloaded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task, eval
from inspect_ai.agent import react
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer
from inspect_ai.solver import TaskState
from inspect_ai.tool import bash_session, text_editor
from inspect_ai.util import sandbox

from harness.sandbox import tools as sandbox_tools
from harness.sandbox.bwrap import bwrap_available

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not bwrap_available(), reason="bubblewrap cannot start here"),
    pytest.mark.skipif(sandbox_tools.tools_tree() is None, reason="Inspect ships no tools here"),
]

MODEL = "mockllm/model"
SCRIPT: list[tuple[str, dict[str, Any]]] = [
    ("bash_session", {"action": "type_submit", "input": "cd /tmp && export X=41"}),
    ("bash_session", {"action": "type_submit", "input": "echo $((X + 1)) > answer.txt; pwd"}),
    ("text_editor", {"command": "create", "path": "/sandbox/notes.txt", "file_text": "hello\n"}),
    ("text_editor", {"command": "str_replace", "path": "/sandbox/notes.txt",
                     "old_str": "hello", "new_str": "goodbye"}),  # fmt: skip
    ("text_editor", {"command": "view", "path": "/tmp/answer.txt"}),
    ("bash_session", {"action": "type_submit", "input": "ls /var/tmp/.*/ | head -3; id -un"}),
    ("submit", {"answer": "42"}),
]


def scripted_outputs() -> list[ModelOutput]:
    outputs = []
    for tool, arguments in SCRIPT:
        out = ModelOutput.for_tool_call(MODEL, tool, arguments)
        out.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
        outputs.append(out)
    return outputs


@scorer(metrics=[accuracy()])
def tool_results():  # type: ignore[no-untyped-def]
    async def score(state: TaskState, target: Target) -> Score:
        answer = (await sandbox().read_file("/tmp/answer.txt")).strip()
        notes = await sandbox().read_file("notes.txt")
        ok = answer == target.text and notes == "goodbye\n"
        return Score(value=CORRECT if ok else INCORRECT, answer=answer, explanation=notes)

    return score


def test_react_agent_with_text_editor_and_bash_session(tmp_path: Path) -> None:
    task = Task(
        dataset=[Sample(input="Compute 41 + 1 with the tools.", target="42")],
        solver=react(tools=[bash_session(), text_editor()]),
        scorer=tool_results(),
        sandbox="bwrap",
        message_limit=30,
    )
    model = get_model(MODEL, custom_outputs=scripted_outputs())
    [log] = eval(task, model=model, log_dir=str(tmp_path), display="none", log_format="json")
    assert log.status == "success", log.error
    assert log.samples is not None
    sample = log.samples[0]
    assert sample.error is None, sample.error
    results = [m for m in sample.messages if m.role == "tool"]
    texts = [str(m.text) for m in results]
    errors = [m.error for m in results if m.error is not None]  # type: ignore[union-attr]
    assert errors == [], errors
    assert "/tmp" in texts[1]  # the session kept its cwd from the first call
    assert "42" in texts[4]  # the editor sees what the shell wrote
    assert "sandbox" in texts[5]  # tools run as the sample's user
    assert sample.scores is not None
    assert sample.scores["tool_results"].value == CORRECT, sample.scores
