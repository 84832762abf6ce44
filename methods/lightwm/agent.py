"""The LightWM agent: a small model acting from a structured working memory, not a transcript.

LightWM (training-free hierarchical working memory for small-model agents; repo
BloomChant/LightWM). At run time, per episode:

1. *fill*: one call turns the goal (the task's opening messages) into the global task state
   (JSON object; fields checked against the schema, plus deterministic init rules);
2. for each subtask of the schema's base sequence, the local state is a copy of the fields
   it expects; each step the model sees only the goal's first lines, the subtask, its local
   state, the allowed actions and this subtask's last few turns, and picks an action;
3. after every observation the schema's deterministic patches run and (``updater="model"``)
   the model emits a JSON patch from the observation; a bad patch is rejected whole, the
   reason goes back to the updater (``patch_retries``) and into the next action prompt;
4. when the subtask's produced fields are filled (or the model calls ``finish_subtask``,
   or its step budget runs out) the produced fields are handed to the global state.

Only Inspect's public API is used and the task's own tools (``state.tools``) are the
actions, so it runs on any task whose tools are set up before the solver, with any model.
The prompts start with ``[lightwm:fill]`` / ``[lightwm:act]`` / ``[lightwm:update]`` so logs
(and scripted test policies) can tell the three calls apart.

    inspect eval harness/causalgame -T sandbox=none --model embedded/smollm2-135m \\
        --solver methods/lightwm/agent.py@lightwm -S schema=causalgame
"""

from __future__ import annotations

import json
from typing import Any, Literal

from inspect_ai.log import transcript
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    Model,
    execute_tools,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, ToolDef, tool

from harness.registry import agent_method
from methods.lightwm.schema import Schema, load_schema
from methods.lightwm.state import WorkingMemory, parse_observation

DEFAULT_MAX_STEPS = 30
DEFAULT_WINDOW = 4
DEFAULT_FIELD_CHARS = 3000
DEFAULT_JSON_MAX_TOKENS = 256
STORE_KEY = "lightwm:global_state"
FINISH = "finish_subtask"
SUBMIT = "submit"

FILL_SYSTEM = (
    "[lightwm:fill] You fill a task-state record from a task description. Reply with ONE JSON "
    "object whose keys are field names; use null for what you do not know."
)
ACT_SYSTEM = (
    "[lightwm:act] You act in a tool environment one step at a time. Use the local state and "
    f"call exactly one allowed tool. Call {FINISH} when this subtask is done."
)
UPDATE_SYSTEM = (
    "[lightwm:update] You keep a JSON state up to date. Reply with ONE JSON list of JSON-Patch "
    'operations, e.g. [{"op": "replace", "path": "/field", "value": 1}]; reply [] if nothing '
    "changes."
)


@tool(name=FINISH)
def finish_subtask() -> Tool:
    async def execute() -> str:
        """Declare the current subtask finished (its produced fields go to the task state).

        Returns:
            A confirmation.
        """
        return "subtask finished"

    return execute


@tool(name=SUBMIT)
def submit_answer() -> Tool:
    async def execute(answer: str) -> str:
        """Submit the final answer to the task (ends the episode).

        Args:
            answer: The final answer.

        Returns:
            The answer as submitted.
        """
        return answer

    return execute


def extract_json(text: str) -> Any:
    """The first JSON object or list in ``text`` (models wrap JSON in prose and fences)."""
    decoder = json.JSONDecoder()
    for i, ch in enumerate(text):
        if ch in "[{":
            try:
                value, _ = decoder.raw_decode(text[i:])
                return value
            except json.JSONDecodeError:
                continue
    raise ValueError("no JSON object or list found in the reply")


def render_state(state: dict[str, Any], limit: int = DEFAULT_FIELD_CHARS) -> str:
    """One ``name = json`` line per field, long values cut at ``limit`` characters."""
    lines = []
    for name, value in state.items():
        text = json.dumps(value, separators=(",", ":"), default=str)
        if len(text) > limit:
            text = text[:limit] + f"...[{len(text) - limit} chars cut]"
        lines.append(f"{name} = {text}")
    return "\n".join(lines) or "(empty)"


def _goal_text(messages: list[ChatMessage]) -> str:
    return "\n\n".join(m.text for m in messages if m.text)


def _window(messages: list[ChatMessage], size: int) -> list[ChatMessage]:
    """The last ``size`` turns, never starting with an orphan tool result."""
    out = messages[-size:] if size > 0 else []
    while out and isinstance(out[0], ChatMessageTool):
        out = out[1:]
    return out


async def _ask_json(
    model: Model, system: str, user: str, max_tokens: int | None
) -> tuple[Any, str | None]:
    messages: list[ChatMessage] = [ChatMessageSystem(content=system), ChatMessageUser(content=user)]
    output = await model.generate(messages, config=GenerateConfig(max_tokens=max_tokens))
    try:
        return extract_json(output.completion), None
    except ValueError as exc:
        return None, f"{exc}: {output.completion[:120]!r}"


class _Episode:
    """One sample's run: the memory, the model, the tools and the visible transcript."""

    def __init__(self, state: TaskState, schema: Schema, model: Model, field_chars: int,
                 json_max_tokens: int | None) -> None:
        self.state = state
        self.json_max_tokens = json_max_tokens
        self.model = model
        self.mem = WorkingMemory(schema)
        self.opening = list(state.messages)
        self.goal = _goal_text(self.opening)
        self.field_chars = field_chars
        self.tools = list(state.tools)
        self.names = [ToolDef(t).name for t in self.tools]

    async def fill(self, use_model: bool) -> None:
        proposed, reason = None, None
        if use_model:
            fields = {n: f.model_dump() for n, f in self.mem.schema.fields.items()}
            user = f"Task:\n{self.goal}\n\nFields:\n{json.dumps(fields)}"
            proposed, reason = await _ask_json(self.model, FILL_SYSTEM, user, self.json_max_tokens)
        self.mem.fill(self.goal, proposed)
        if reason:
            self.mem.rejections.append(f"task state not filled by the model: {reason}")
        self.mem.begin()

    def act_prompt(self, last: bool) -> list[ChatMessage]:
        sub = self.mem.subtask
        allowed = self.mem.allowed(self.names)
        notes = self.mem.pop_rejections()
        system = "\n\n".join([*(m.text for m in self.opening if m.role == "system"), ACT_SYSTEM])
        parts = [
            f"Goal: {self.state.input_text[:500]}",
            f"Subtask {self.mem.index + 1}/{len(self.mem.schema.subtasks)}: {sub.name}"
            + (f" - {sub.description}" if sub.description else ""),
            "LOCAL STATE:",
            render_state(self.mem.local, self.field_chars),
            "Allowed actions: " + ", ".join([*allowed, FINISH, *([SUBMIT] if last else [])]),
        ]
        if notes:
            parts.append("Rejected updates (fix these):\n" + "\n".join(f"- {n}" for n in notes))
        return [ChatMessageSystem(content=system), ChatMessageUser(content="\n".join(parts))]

    def act_tools(self, last: bool) -> list[Tool]:
        allowed = set(self.mem.allowed(self.names))
        tools = [t for t, n in zip(self.tools, self.names, strict=True) if n in allowed]
        tools.append(finish_subtask())
        if last and SUBMIT not in self.names:
            tools.append(submit_answer())
        return tools

    async def model_update(self, call: str, arguments: dict[str, Any], observation: str,
                           retries: int) -> None:
        base = (
            f"Subtask: {self.mem.subtask.name}\n"
            f"STATE:\n{render_state(self.mem.local, self.field_chars)}"
            f"\n\nAction: {call}({json.dumps(arguments, default=str)})\n"
            f"Observation:\n{observation[: self.field_chars]}\n\n"
            f"Writable fields: {', '.join(self.mem.local)}"
        )
        user = base
        for _ in range(retries + 1):
            patch, reason = await _ask_json(self.model, UPDATE_SYSTEM, user, self.json_max_tokens)
            if reason is None:
                reason = self.mem.update(patch, "model")
                if reason is None:
                    return
                self.mem.rejections.pop()  # kept only if the last retry fails too
            user = f"{base}\n\nYour previous patch was rejected: {reason}\nSend a corrected patch."
        self.mem.rejections.append(f"state update: {reason}")


@agent_method(
    "lightwm",
    summary=(
        "LightWM: schema-induced global/local working memory with JSON-patch updates"
    ),
)
@solver
def lightwm(
    schema: str | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    updater: Literal["model", "rules"] = "model",
    patch_retries: int = 1,
    window: int = DEFAULT_WINDOW,
    fill: bool = True,
    field_chars: int = DEFAULT_FIELD_CHARS,
    json_max_tokens: int | None = DEFAULT_JSON_MAX_TOKENS,
    max_tokens: int | None = None,
) -> Solver:
    """LightWM: schema-staged working memory around the task's tools (module docstring).

    Args:
        schema: A family name under ``methods/lightwm/schemas/``, a schema file, or
            None for the generic one-subtask schema. ``{key}`` placeholders are filled from
            the sample's metadata (``household_{goal_kind}``: one family per task type, as
            the paper induces one schema per ALFWorld task type).
        max_steps: Action calls per episode (fill and update calls not counted).
        updater: ``model`` (deterministic patches plus a model-written JSON patch per
            observation) or ``rules`` (deterministic patches only; half the calls).
        patch_retries: Extra tries when the model's patch is rejected (with the reason).
        window: How many of the current subtask's own turns the action prompt shows.
        fill: Ask the model to fill the global task state (else init rules only).
        field_chars: Longest rendering of one state field in a prompt.
        json_max_tokens: Token cap of the fill and update replies (JSON only: a small
            model that rambles past it would otherwise spend most of the episode there).
        max_tokens: Token cap of each action reply (None: the model's default).
    """
    if updater not in ("model", "rules"):
        raise ValueError(f"updater must be 'model' or 'rules', got {updater!r}")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        ep = _Episode(state, load_schema(schema_for(schema, state.metadata)), get_model(),
                      field_chars, json_max_tokens)
        await ep.fill(fill)
        turns: list[ChatMessage] = []
        for _ in range(max_steps):
            if ep.mem.done:
                break
            last = ep.mem.index == len(ep.mem.schema.subtasks) - 1
            prompt = ep.act_prompt(last)
            tools = ep.act_tools(last)
            output = await ep.model.generate([*prompt, *_window(turns, window)], tools,
                                             config=GenerateConfig(max_tokens=max_tokens))
            state.output = output
            state.messages.append(output.message)
            turns.append(output.message)
            ep.mem.record_step()
            submitted = False
            finished = False
            if output.message.tool_calls:
                result = await execute_tools([*prompt, *turns], tools)
                for msg in result.messages:
                    if not isinstance(msg, ChatMessageTool):
                        continue
                    state.messages.append(msg)
                    turns.append(msg)
                    if msg.function == FINISH:
                        finished = True
                    elif msg.function == SUBMIT and msg.error is None and SUBMIT not in ep.names:
                        state.output.completion = msg.text
                        submitted = True
                    elif msg.error is None and msg.function:
                        args = _call_arguments(output.message, msg.tool_call_id)
                        ep.mem.observe(msg.function, args, parse_observation(msg.text))
                        if updater == "model":
                            await ep.model_update(msg.function, args, msg.text, patch_retries)
            else:
                nudge = ChatMessageUser(content="Call one of the allowed actions.")
                turns.append(nudge)
            if submitted:
                break
            if finished or ep.mem.complete():
                ep.mem.finish()
                turns = []
        state.store.set(STORE_KEY, ep.mem.global_state)
        info: dict[str, Any] = {"subtasks_done": ep.mem.index, "events": ep.mem.events[-50:]}
        transcript().info({"lightwm": info}, source="lightwm")
        return state

    return solve


def schema_for(schema: str | None, metadata: dict[str, Any]) -> str | None:
    """``schema`` with ``{key}`` filled from the sample's metadata (unchanged without braces)."""
    if schema is None or "{" not in schema:
        return schema
    try:
        return schema.format(**metadata)
    except KeyError as exc:
        raise ValueError(f"schema {schema!r} names metadata key {exc} the sample lacks") from exc


def _call_arguments(message: ChatMessageAssistant, call_id: str | None) -> dict[str, Any]:
    for call in message.tool_calls or []:
        if call.id == call_id:
            return dict(call.arguments)
    return {}
