"""The two ReAct baselines LightWM is compared with, over the task's own tools.

* :func:`task_react` is Inspect's ``react()`` given the tools the task set up
  (``state.tools``) and a turn budget: the plain baseline. (``react()`` used directly as a
  solver sees only the tools passed to it, so a task's setup tools would be lost.)
* :func:`memory_react` is the same loop with a *running-summary memory*: the model sees
  the task's opening messages, a summary of everything older than the last ``window``
  messages, and those messages. Whenever messages fall out of the window the same model
  folds them into the summary (one extra call). The log keeps the full conversation.

Why a summary and not truncation: small models have small contexts (2,048 tokens for the
embedded SmolLM2) and long tool results overflow them within a few steps; truncation
forgets, the summary is the cheapest memory that does not. It is the prior-art
working-memory baseline of the LightWM paper, in its simplest form.

The summariser's prompt starts with ``[memory:summarise]`` so logs (and scripted test
policies) can tell it from an action call. Only Inspect's public API is used.
"""

from __future__ import annotations

import json

from inspect_ai.agent import Agent, AgentState, as_solver, react
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool

from harness.registry import agent_method

DEFAULT_MAX_TURNS = 30
DEFAULT_WINDOW = 6
DEFAULT_SUMMARY_CHARS = 3000
DEFAULT_EVENT_CHARS = 1200
CHARS_PER_TOKEN = 3  # the summary's token cap is its character budget over this
SUMMARY_SYSTEM = (
    "[memory:summarise] You keep the running summary of an agent's progress on a task. "
    "Merge the new events into the summary. Keep every fact needed later (ids, values, "
    "results, what was tried). Reply with the new summary only."
)
MEMORY_HEADER = "[memory] Summary of earlier steps:"


def _one_line(text: str) -> str:
    """A tool result on one line: JSON re-dumped compactly (fewer tokens), else joined."""
    try:
        value, end = json.JSONDecoder().raw_decode(text.strip())
    except json.JSONDecodeError:
        return " ".join(text.split())
    rest = " ".join(text.strip()[end:].split())
    return json.dumps(value, separators=(",", ":"), default=str) + (f" {rest}" if rest else "")


def render_events(messages: list[ChatMessage], limit: int = DEFAULT_EVENT_CHARS) -> str:
    """Messages as ``CALL tool {args}`` / ``RESULT tool: text`` / ``SAY text`` lines."""
    lines: list[str] = []
    for m in messages:
        if isinstance(m, ChatMessageAssistant):
            if m.text.strip():
                lines.append(f"SAY {m.text.strip()[:limit]}")
            for call in m.tool_calls or []:
                lines.append(f"CALL {call.function} {json.dumps(call.arguments, default=str)}")
        elif isinstance(m, ChatMessageTool):
            text = m.error.message if m.error else _one_line(m.text)
            lines.append(f"RESULT {m.function}: {text[:limit]}")
        elif m.text.strip():
            lines.append(f"NOTE {m.text.strip()[:limit]}")
    return "\n".join(lines)


def _opening(messages: list[ChatMessage]) -> int:
    """How many leading messages are the task itself (before the first assistant turn)."""
    for i, m in enumerate(messages):
        if isinstance(m, ChatMessageAssistant):
            return i
    return len(messages)


def running_summary_model(
    window: int = DEFAULT_WINDOW,
    summary_chars: int = DEFAULT_SUMMARY_CHARS,
    max_tokens: int | None = None,
) -> Agent:
    """A react ``model=`` agent: generate from opening + summary + the last ``window`` msgs.

    State (the summary and how far it reaches) lives in the closure, so build one per
    sample. The opening is found once, on the first call, before any turn is added.
    """
    summary = ""
    covered = 0  # messages after the opening already folded into the summary
    head_len: int | None = None

    async def generate(state: AgentState, tools: list[Tool]) -> AgentState:
        """Generate with the summarised view; append the reply to the full history.

        Args:
            state: The agent's full conversation.
            tools: Tools offered for this turn.
        """
        nonlocal summary, covered, head_len
        model = get_model()
        if head_len is None:
            head_len = _opening(state.messages)
        head, body = state.messages[:head_len], state.messages[head_len:]
        cut = max(0, len(body) - window)
        while cut < len(body) and isinstance(body[cut], ChatMessageTool):
            cut += 1  # never show a tool result without the call that asked for it
        if cut > covered:
            events = render_events(body[covered:cut])
            reply = await model.generate([
                ChatMessageSystem(content=SUMMARY_SYSTEM),
                ChatMessageUser(content=f"Current summary:\n{summary or '(none)'}\n\n"
                                        f"New events:\n{events}"),
            ], config=GenerateConfig(max_tokens=summary_chars // CHARS_PER_TOKEN))
            summary = reply.completion.strip()[:summary_chars]
            covered = cut
        memory = [ChatMessageUser(content=f"{MEMORY_HEADER}\n{summary}")] if summary else []
        output = await model.generate([*head, *memory, *body[covered:]], tools,
                                      config=GenerateConfig(max_tokens=max_tokens))
        state.messages.append(output.message)
        state.output = output
        return state

    return generate


def capped_model(max_tokens: int | None) -> Agent:
    """A react ``model=`` agent that only caps the reply length (no other change)."""

    async def generate(state: AgentState, tools: list[Tool]) -> AgentState:
        """Generate from the full conversation with ``max_tokens``.

        Args:
            state: The agent's full conversation.
            tools: Tools offered for this turn.
        """
        output = await get_model().generate(state.messages, tools,
                                            config=GenerateConfig(max_tokens=max_tokens))
        state.messages.append(output.message)
        state.output = output
        return state

    return generate


def _turn_budget(max_turns: int) -> object:
    async def on_continue(state: AgentState) -> bool:
        turns = sum(isinstance(m, ChatMessageAssistant) for m in state.messages)
        return turns < max_turns

    return on_continue


def _react_over_task_tools(state: TaskState, max_turns: int, model: Agent | None) -> Agent:
    return react(
        tools=list(state.tools),
        model=model,
        on_continue=_turn_budget(max_turns),  # type: ignore[arg-type]
        submit=True,
    )


@agent_method(
    "react",
    summary=(
        "Inspect's react() loop with submit over the task's own tools (baseline)"
    ),
)
@solver
def task_react(max_turns: int = DEFAULT_MAX_TURNS, max_tokens: int | None = None) -> Solver:
    """Inspect's ``react()`` over the task's tools, stopped after ``max_turns`` model turns.

    Args:
        max_turns: Assistant turns before the loop stops (react's submit also stops it).
        max_tokens: Token cap of each reply (None: the model's default).
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = capped_model(max_tokens) if max_tokens is not None else None
        agent = _react_over_task_tools(state, max_turns, model)
        return await as_solver(agent)(state, generate)

    return solve


@agent_method(
    "react-memory",
    summary=(
        "react() over the task's tools with a running-summary memory (LightWM baseline)"
    ),
)
@solver
def memory_react(
    window: int = DEFAULT_WINDOW,
    max_turns: int = DEFAULT_MAX_TURNS,
    summary_chars: int = DEFAULT_SUMMARY_CHARS,
    memory: bool = True,
    max_tokens: int | None = None,
) -> Solver:
    """``react()`` over the task's tools with a running-summary memory (module docstring).

    Args:
        window: Most recent messages shown verbatim; older ones live in the summary.
        max_turns: Assistant turns before the loop stops.
        summary_chars: Longest summary kept.
        memory: False gives the plain baseline (same as :func:`task_react`).
        max_tokens: Token cap of each action reply (None: the model's default).
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = (running_summary_model(window, summary_chars, max_tokens) if memory
                 else capped_model(max_tokens) if max_tokens is not None else None)
        agent = _react_over_task_tools(state, max_turns, model)
        return await as_solver(agent)(state, generate)

    return solve
