"""A real external agent, run through Inspect's agent bridge (issue 52, item 2).

CausalGame's "OpenCode-style" agent imitates an external agent; this module runs one:
LangGraph's prebuilt ReAct agent (``langgraph.prebuilt.create_react_agent``), talking to its
model through LangChain's OpenAI client (``langchain_openai.ChatOpenAI``). Neither package
knows Inspect. Inspect's :func:`inspect_ai.agent.agent_bridge` patches the OpenAI client
library for the duration of the sample, so the client's requests to the model named
``inspect`` go to the eval's model instead: the embedded ladder, ``harness serve`` through
``openai-api/``, an API model, or a scripted policy in tests. The agent's code is unchanged;
only the model endpoint moves. Its request settings (``max_tokens``) are forwarded when
given, so a budgeted study caps replies exactly as its other agents do.

The task's own tools (``state.tools``: CausalGame's drone and archive tools, WorldTravel's
search tools) are handed to the agent as LangChain tools with the same names, descriptions
and JSON schemas. A tool error comes back to the agent as its text, as Inspect's own loop
does. The bridge records every model call in the transcript and the conversation the agent
held (``bridge.state``) becomes the sample's messages, so scorers read it as they read any
other agent's.

Why the in-process bridge and not the sandbox bridge: the sandbox bridge runs the agent's
own process inside the sample's sandbox, which then needs LangGraph installed in its image;
the offline images here have no package index to install it from. The agent still acts only
through the task's tools, which run where the task puts them.

No network: the client is built with a placeholder loopback ``base_url`` that the bridge
intercepts; MCP servers the client might declare, web search and code execution are
withheld. LangSmith tracing is switched off for the call.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from inspect_ai.agent import AgentState, agent_bridge
from inspect_ai.model import ChatMessage, ChatMessageAssistant
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, ToolDef, ToolError

from harness.registry import agent_method

DEFAULT_MAX_TURNS = 30
"""Model turns before the agent is stopped (LangGraph's recursion limit is two steps a
turn: the model, then its tools)."""

BRIDGED_MODEL = "inspect"
"""The model name the bridge redirects to the eval's model."""

STORE_KEY = "bridged_agent"
"""Where the sample's store records the agent's framework, turns and whether the budget
stopped it."""

_PLACEHOLDER_URL = "http://127.0.0.1:9/v1"
"""Never contacted: the bridge patches the client before any request is sent."""


def tool_text(result: Any) -> str:
    """An Inspect tool's result as the text a LangChain tool returns."""
    if isinstance(result, str):
        return result
    if isinstance(result, list):
        return "\n".join(getattr(part, "text", str(part)) for part in result)
    return str(result)


def langchain_tool(tool: Tool) -> Any:
    """The Inspect ``tool`` as a LangChain ``StructuredTool`` with its name, description and
    parameter schema; errors the tool raises as :class:`ToolError` come back as text."""
    from langchain_core.tools import StructuredTool

    definition = ToolDef(tool)
    schema = definition.parameters.model_dump(exclude_none=True)
    schema.setdefault("properties", {})

    async def call(**kwargs: Any) -> str:
        try:
            return tool_text(await definition.tool(**kwargs))
        except ToolError as error:
            return f"Error: {error.message}"

    return StructuredTool.from_function(coroutine=call, name=definition.name,
                                        description=definition.description,
                                        args_schema=schema)


def openai_messages(messages: list[ChatMessage]) -> list[dict[str, str]]:
    """The task's opening messages as plain role/content pairs for the agent's first call
    (the system prompt and the user's task; earlier assistant turns are not replayed)."""
    out = []
    for message in messages:
        if message.role in ("system", "user"):
            out.append({"role": message.role, "content": message.text})
    return out


def model_turns(messages: list[ChatMessage]) -> int:
    """Assistant turns in a conversation (what the turn budget counts)."""
    return sum(isinstance(m, ChatMessageAssistant) for m in messages)


@agent_method(
    "langgraph-react",
    summary="LangGraph's prebuilt ReAct agent on LangChain's OpenAI client, through "
            "Inspect's agent bridge, over the task's tools (a real external agent)",
)
@solver
def langgraph_react(max_turns: int = DEFAULT_MAX_TURNS, max_tokens: int | None = None,
                    temperature: float | None = None) -> Solver:
    """LangGraph's ReAct agent over the task's tools, its model calls bridged to the eval's
    model (module docstring).

    Args:
        max_turns: Model turns before the agent is stopped.
        max_tokens: Token cap the client asks for on each reply (forwarded; None: the eval's
            own config).
        temperature: Sampling temperature the client asks for (forwarded; None: the eval's).
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        try:
            from langchain_openai import ChatOpenAI
            from langgraph.errors import GraphRecursionError
            from langgraph.prebuilt import create_react_agent
        except ImportError as exc:  # the optional extra is missing
            raise RuntimeError("langgraph-react needs the `bridge` extra: "
                               "pip install -e '.[bridge]'") from exc

        client_settings: dict[str, Any] = {}
        if max_tokens is not None:
            client_settings["max_tokens"] = max_tokens
        if temperature is not None:
            client_settings["temperature"] = temperature
        tools = [langchain_tool(t) for t in state.tools]
        opening = openai_messages(state.messages)
        os.environ.setdefault("LANGSMITH_TRACING", "false")
        os.environ.setdefault("LANGCHAIN_TRACING_V2", "false")
        async with agent_bridge(AgentState(messages=list(state.messages)),
                                web_search=False, code_execution=False,
                                client_mcp_servers=False,
                                forward_generation_config=bool(client_settings)) as bridge:
            llm = ChatOpenAI(model=BRIDGED_MODEL, api_key="bridged",  # type: ignore[arg-type]
                             base_url=_PLACEHOLDER_URL, max_retries=0, **client_settings)
            graph = create_react_agent(llm, tools)
            try:
                await graph.ainvoke({"messages": opening},
                                    config={"recursion_limit": 2 * max_turns + 1})
            except GraphRecursionError:
                pass  # the turn budget ran out, as react()'s on_continue would stop it
        state.messages = list(bridge.state.messages)
        if bridge.state.output is not None and bridge.state.output.choices:
            state.output = bridge.state.output
        state.store.set(STORE_KEY, _turn_record(state.messages, max_turns))
        return state

    return solve


def _turn_record(messages: list[ChatMessage], max_turns: int) -> Mapping[str, Any]:
    turns = model_turns(messages)
    return {"framework": "langgraph", "turns": turns, "stopped_by_budget": turns >= max_turns}
