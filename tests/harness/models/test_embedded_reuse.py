"""An agent episode on the embedded engine processes each prompt token about once.

A real multi-turn eval (SmolLM2-135M, the bundled model: its template has no tools block, so
the tools are described in the system turn) with a tool listed on every turn and a closing
``tool_choice="none"`` turn, as CausalGame's report turn is. The engine keeps the KV of every
complete aligned block of a prompt, so call ``i`` can only re-process what follows the last
block boundary of call ``i - 1``'s prompt: at most ``BLOCK`` tokens more than the turn's new
tokens. The bound fails if a turn re-renders the conversation (tools dropped under
``"none"``, a changed system turn) or the cache is lost between turns. Read back through
:func:`harness.results.prompt_reuse`, which counts each sample once, copies included.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageUser, GenerateConfig, execute_tools, get_model
from inspect_ai.scorer import includes
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, tool
from typer.testing import CliRunner

import harness.models.providers  # noqa: F401  (registers embedded/)
from harness.cli import app
from harness.models.llama_engine import BLOCK
from harness.results import prompt_reuse

pytest.importorskip("llama_cpp")
pytestmark = pytest.mark.slow  # a five-call eval of the 135M model: 10-50 s on 2 cores

TURNS = 4


@tool
def add() -> Tool:
    async def execute(x: int, y: int) -> int:
        """Add two integers.

        Args:
            x: The first integer.
            y: The second integer.
        """
        return x + y

    return execute


@solver
def turns_then_report() -> Solver:
    """``TURNS`` tool-enabled turns, each with a new user message, then a no-tools report."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model()
        tools = [add()]
        for turn in range(TURNS):
            state.messages.append(ChatMessageUser(content=f"Step {turn}: add {turn} and 7."))
            output = await model.generate(state.messages, tools)
            state.messages.append(output.message)
            if output.message.tool_calls:
                result = await execute_tools(state.messages, tools)
                state.messages.extend(result.messages)
        state.messages.append(ChatMessageUser(content="Report what you found, in one line."))
        state.output = await model.generate(state.messages, tools, tool_choice="none")
        state.messages.append(state.output.message)
        return state

    return solve


def test_an_episode_processes_each_prompt_token_about_once(tmp_path: Path) -> None:
    task = Task(dataset=[Sample(input="You help with sums. " * 30, target="7", id="sums")],
                solver=turns_then_report(), scorer=includes(),
                config=GenerateConfig(max_tokens=24, temperature=0.0, seed=3))
    [log] = eval(task, model="embedded/smollm2-135m", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    frame, account = prompt_reuse(tmp_path)
    assert frame.height == 1 and account.samples == 1
    episode = frame.row(0, named=True)
    assert episode["calls"] == TURNS + 1
    # every call after the first re-processes at most a block beyond the previous prompt
    bound = episode["final_prompt_tokens"] + BLOCK * (episode["calls"] - 1)
    assert episode["processed_tokens"] <= bound, episode
    assert episode["ratio"] == episode["processed_tokens"] / episode["final_prompt_tokens"]
    # the closing no-tools turn kept the prefix: it re-used all but its last block(s)
    [sample] = log.samples or []
    usage = sample.output.usage
    assert usage is not None and usage.input_tokens > 0
    assert (usage.input_tokens_cache_read or 0) >= usage.input_tokens - 3 * BLOCK

    # a copy of the log under a second name is the same run: the episode counts once
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(next(tmp_path.glob("*.eval")), copy / "renamed.eval")
    again, account = prompt_reuse(tmp_path)
    assert again.height == 1 and account.samples == 1
    assert again.row(0, named=True)["processed_tokens"] == episode["processed_tokens"]

    # the command a user runs: the same numbers, the counting stated, exit 1 over target
    ok = CliRunner().invoke(app, ["models", "reuse", str(tmp_path), "--json"])
    assert ok.exit_code == (0 if episode["ratio"] <= 1.3 else 1), ok.output
    shown = json.loads(ok.output)
    assert shown["episodes"][0]["processed_tokens"] == episode["processed_tokens"]
    assert shown["counting"]["samples_counted"] == 1
    assert shown["counting"]["duplicates_set_aside"] == 1
    over = CliRunner().invoke(app, ["models", "reuse", str(tmp_path), "--target", "0.01"])
    assert over.exit_code == 1 and "1 over 0.01x" in over.output
