"""From a game task's training instances to SFT examples: scouts, dialogues, token rows.

Three steps, each a function a test can call on its own:

1. :func:`scout_task` loads the task's training split (through the harness, by name),
   rebuilds each sample's game with the simulator the task names in its metadata, lets
   a tabular scout learn it and keeps the solved greedy trajectories as dialogues;
2. :func:`window_prompts` renders every turn of those dialogues exactly as the suite's
   white-box provider renders a request with a forced ``move`` call (the same
   :mod:`harness.models.toolprompt` code, the model's chat template, the forced
   ``<tool_call>`` prefix), so what the model is trained on is what it is asked at test;
3. :func:`token_rows` turns (prompt, answer) pairs into token ids.

Why the task, not the environment: ``methods/`` imports no environment, and the task is
the interface; any task whose metadata names a ``simulator`` (``module:callable``, spec ->
game) and a ``tool`` (its ``ToolInfo``), and whose samples carry ``spec`` and start with
(system, first board), feeds this recipe.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from methods.scout.qlearning import QConfig, train_scout
from methods.scout.textualise import dialogue, turns

__all__ = ["ScoutData", "answer_text", "load_game_task", "opening_prompts", "render_window",
           "scout_task", "token_rows", "window_prompts"]


@dataclass
class ScoutData:
    """Dialogues from the scouts, what the scouts cost, and the tool they call."""

    dialogues: list[list[dict[str, Any]]]
    tool: dict[str, Any]
    stats: dict[str, dict[str, float]] = field(default_factory=dict)


def _args(text: str) -> dict[str, Any]:
    from methods.recipes.tinylm import json_object

    return json_object(text)


def _arg_name(tool: dict[str, Any]) -> str:
    properties = list(tool.get("parameters", {}).get("properties", {}))
    if len(properties) != 1:
        raise ValueError(f"the game tool must take exactly one argument, got {properties}")
    return str(properties[0])


def load_game_task(task: str, task_args: str) -> tuple[Any, Callable[[Any], Any],
                                                       dict[str, Any]]:
    """``(task, simulator, tool)``: the task built with ``task_args`` (JSON), the callable
    its metadata names (spec -> game) and its tool's ``ToolInfo`` fields."""
    from harness.factorial.cells import load_task
    from harness.registry import resolve_target

    built = load_task(task, _args(task_args))
    meta = dict(built.metadata or {})
    if "simulator" not in meta or "tool" not in meta:
        raise ValueError(f"task {task!r} names no simulator/tool in its metadata")
    return built, resolve_target(str(meta["simulator"])), dict(meta["tool"])


def _opening(sample: Any) -> list[Any]:
    """The sample's (system, first board) messages."""
    messages = list(sample.input) if not isinstance(sample.input, str) else []
    if len(messages) < 2:
        raise ValueError(f"sample {sample.id} does not start with (system, first board)")
    return messages


def opening_prompts(task: str, task_args: str, tokenizer: Any) -> list[str]:
    """The first-turn prompt of every sample of the task, as ``whitebox/`` renders it."""
    built, _, tool = load_game_task(task, task_args)
    return [render_window(m[0].text, m[1].text, tool, tokenizer)
            for m in (_opening(s) for s in built.dataset)]


def scout_task(task: str, task_args: str, cfg: QConfig, seed: int) -> ScoutData:
    """Scout every sample of ``task`` built with ``task_args`` (JSON); keep the solved ones.

    ``stats[game]``: instances, solved, transitions, CPU seconds of learning, and the
    total length of the kept trajectories against the optimum the task records.
    """
    built, simulator, tool = load_game_task(task, task_args)
    arg = _arg_name(tool)
    out = ScoutData([], tool)
    for k, sample in enumerate(built.dataset):
        game = simulator(sample.metadata["spec"])
        messages = _opening(sample)
        started = time.process_time()
        run = train_scout(game, cfg, seed * 100_003 + k)
        cpu = time.process_time() - started
        row = out.stats.setdefault(game.name, {"instances": 0, "solved": 0, "transitions": 0,
                                               "cpu_s": 0.0, "moves": 0, "optimal": 0})
        row["instances"] += 1
        row["transitions"] += run.transitions
        row["cpu_s"] += cpu
        if not run.trajectory.solved:
            continue
        row["solved"] += 1
        row["moves"] += len(run.trajectory.actions)
        row["optimal"] += int(sample.metadata.get("optimal", 0))
        out.dialogues.append(dialogue(messages[0].text, game, run.trajectory,
                                      first=messages[1].text, tool=str(tool["name"]), arg=arg))
    return out


def answer_text(tool: dict[str, Any], action: str) -> str:
    """What the model writes after the forced ``<tool_call>{"name": ..., "arguments": {``
    prefix: the argument and the closing braces and tag."""
    from harness.models.toolprompt import CLOSE_TAG

    body = json.dumps({_arg_name(tool): action})
    return body[1:] + "}" + CLOSE_TAG


def render_window(system: str, board: str, tool: dict[str, Any], tokenizer: Any) -> str:
    """The prompt ``whitebox/`` decodes for one turn (the system turn, the board as a user
    turn, the ``move`` tool forced): the model's chat template over the suite's tool
    prompt (the template's own tools block when it has one), then the forced prefix."""
    from inspect_ai.model import ChatMessage, ChatMessageSystem, ChatMessageUser
    from inspect_ai.tool import ToolFunction, ToolInfo

    from harness.models.toolprompt import forced_prefix, native_messages, openai_tools, to_chat

    info = ToolInfo.model_validate(tool)
    chat: list[ChatMessage] = [ChatMessageSystem(content=system),
                               ChatMessageUser(content=board)]
    if "tools" in str(getattr(tokenizer, "chat_template", "") or ""):
        text = tokenizer.apply_chat_template(native_messages(chat), tools=openai_tools([info]),
                                             tokenize=False, add_generation_prompt=True)
    else:
        text = tokenizer.apply_chat_template(to_chat(chat, [info], ToolFunction(info.name)),
                                             tokenize=False, add_generation_prompt=True)
    return str(text) + forced_prefix([info])


def window_prompts(data: ScoutData, tokenizer: Any) -> list[tuple[str, str]]:
    """``(prompt, answer)`` per turn of every dialogue (see :func:`render_window`)."""
    arg = _arg_name(data.tool)
    pairs: list[tuple[str, str]] = []
    for messages in data.dialogues:
        for window, action in turns(messages, tool=str(data.tool["name"]), arg=arg):
            prompt = render_window(window[0]["content"], window[1]["content"], data.tool,
                                   tokenizer)
            pairs.append((prompt, answer_text(data.tool, action)))
    return pairs


def token_rows(pairs: list[tuple[str, str]], tokenizer: Any,
               eos: int | None) -> list[tuple[list[int], list[int]]]:
    """Token ids of each (prompt, answer), no special tokens added (as the provider
    encodes prompts); the answer ends with ``eos`` when given."""
    rows = []
    for prompt, answer in pairs:
        p = tokenizer(prompt, add_special_tokens=False).input_ids
        a = tokenizer(answer, add_special_tokens=False).input_ids + ([eos] if eos is not None
                                                                      else [])
        rows.append((list(p), list(a)))
    return rows
