"""The benchmark's agents: the original harness's turn protocol (ReAct), an OpenCode-style
free-running loop, and the prompting mode.

``causalgame_agent`` (the default, the leaderboard's "Agentic (ReAct)" mode): turns are
counted by the harness, not the model: each turn opens with a status line, the model gets
up to ``iterations`` tool-calling rounds, and the episode ends on submission, the turn
limit (deploy budget + 10) plus up to 3 grace turns, 10 idle turns, or 5 turns that end in
an error. Under the suite protocol a run that never submits is auto-submitted with its
best observed design (marked ``auto_submitted``); under ``protocol=published`` it is left
unsubmitted and scored N/A, as the released harness recorded it. A reflection report is
requested after the submission.

Both tool-using agents run inside Inspect's ``checkpointer()``: a no-op unless the task's
``checkpoint`` option (or ``inspect eval --checkpoint``) turns it on. Then each turn (each
step of the OpenCode loop) starts at a checkpoint boundary where the conversation, the
loop's counters and the game's action log agree; a killed process resumes from the last
checkpoint (``inspect eval-retry``), the game rebuilt by ``session.resume_game``.

``opencode_agent`` (``-T agent=opencode``): the shape of the leaderboard's OpenCode
coding-agent row: one free-running tool loop with no turn headers, no per-turn reasoning
suffix and no exploration warnings, the Python analysis sandbox as its workspace. The
released OpenCode harness (the OpenCode CLI in its own container, driving the game API)
is not reproduced; only the loop shape is.

``prompting_solver`` (``-T mode=prompting``, the leaderboard's "Prompting" table): one
model call sees the briefing, the action space and all visible history in a single
context and answers a design, without tools and without experiments.
"""

from __future__ import annotations

import json
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageTool,
    ChatMessageUser,
    execute_tools,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import Checkpointer, checkpointer

from benchmarks.causalgame.session import auto_submit_setting, current_game, current_protocol
from environments.causalgame import Game, GameError
from environments.causalgame.game import MAX_DEPLOYS

REACT_SUFFIX = (
    "State your observation, your hypothesis and your reasoning, then call "
    "exactly the tools you need."
)
REPORT_STORE_KEY = "causalgame:report"


def turn_message(game: Game, turn: int, max_turns: int, grace: bool) -> str:
    """The per-turn status prompt with escalating warnings."""
    used = len(game.deployments)
    left = max_turns - turn
    head = (
        f"[Turn {turn}/{max_turns} | Deployments: {used}/{MAX_DEPLOYS} used, "
        f"{MAX_DEPLOYS - used} remaining]"
    )
    parts = [
        head,
        f"Drones remaining: {game.drones_remaining}. Submitted: "
        f"{'yes' if game.game_over else 'no'}.",
    ]
    if grace:
        parts.append(
            "URGENT: exploration is over. Call submit_final_design NOW with your "
            "best design; otherwise "
            + ("your best observed design is auto-submitted." if auto_submit_enabled()
               else "the run ends without a submission.")
        )
    elif left <= 0:
        parts.append("WARNING: this is your last turn. Submit your final design now.")
    elif left <= 2:
        parts.append(f"WARNING: only {left} turns left. Prepare to submit.")
    elif left <= 5:
        parts.append(f"Note: {left} turns left.")
    return "\n".join([*parts, REACT_SUFFIX])


def reflection_prompt(game: Game) -> str:
    """The post-submission request for a plain-text report (spec 12.1)."""
    final = game.final or {}
    return (
        f"Mission report: Stage-2 survival {final.get('survival_rate')} "
        f"({final.get('survived')}/{final.get('fleet_size')}); victory: "
        f"{'yes' if final.get('victory') else 'no'}; Stage-1 drones used: {game.drones_used}.\n"
        "Without calling tools, answer in plain text: (1) did you solve the task (survival "
        f"at or above {game.scenario.threshold * 100:.0f}%)? (2) what was the key to "
        "survival? (3) why did some drones fail? (4) your final conclusion."
    )


def auto_submit_enabled(protocol: str | None = None, agent_default: bool = True) -> bool:
    """Whether an unsubmitted run gets the fallback design.

    The task's ``auto_submit`` option decides when set; unset, the protocol and the agent do:
    under ``protocol=published`` never (N/A), under the suite protocol when the agent's
    own default says so (the benchmark's agents: yes; a generic agent: no)."""
    setting = auto_submit_setting()
    if setting is not None:
        return setting
    return agent_default and (protocol or current_protocol()) != "published"


def auto_submit(game: Game, protocol: str | None = None, agent_default: bool = True) -> None:
    """Submit the best observed design (or the default design if nothing was deployed),
    when :func:`auto_submit_enabled` (under ``protocol=published`` and without the task's
    ``auto_submit=true``, nothing is submitted: the run stays unsubmitted, N/A)."""
    if game.game_over or not auto_submit_enabled(protocol, agent_default):
        return
    best = game.best_observed()
    try:
        if best is not None:
            game.submit(best.design, best.equipment, auto=True)
            return
    except GameError:
        pass
    default = {
        f"{n}_def": float(d)
        for n, d in zip(
            game.scenario.components.names, game.scenario.components.default_def, strict=True
        )
    }
    game.submit(default, None, auto=True)


@solver
def causalgame_agent(
    iterations: int = 5,
    grace_turns: int = 3,
    idle_limit: int = 10,
    error_limit: int = 5,
    reflect: bool = True,
    max_turns: int | None = None,
) -> Solver:
    """The turn-based tool-calling agent of the benchmark (see module docstring).

    Args:
        iterations: Model calls per turn (each may hold several tool calls).
        grace_turns: Extra turns after the turn limit or the drone budget runs out.
        idle_limit: Stop after this many turns without a deploy or a submission.
        error_limit: Stop after this many consecutive turns ending in a tool error.
        reflect: Ask for the reflection report after the submission.
        max_turns: Turns before the grace turns (default: the deploy budget + 10, the
            released harness's); smaller for a budgeted study on a slow model.
    """
    turn_limit = MAX_DEPLOYS + 10 if max_turns is None else max_turns

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        async with checkpointer() as cp:
            loop = _track_episode(cp, state, {"turn": 0, "idle": 0, "errors": 0, "grace": 0})
            if cp.attempt != "resume_for_scoring":  # else the agent had finished: score
                await _turns(cp, state, loop)
        return state

    async def _turns(cp: Checkpointer, state: TaskState, loop: dict[str, int]) -> None:
        game = current_game()
        model = get_model()
        max_turns = turn_limit
        while not game.game_over:
            await cp.tick()  # a turn boundary: messages, counters and game log agree
            loop["turn"] += 1
            turn = loop["turn"]
            grace = turn > max_turns or game.drones_remaining <= 0
            if grace:
                loop["grace"] += 1
                if loop["grace"] > grace_turns:
                    break
            before = (len(game.deployments), game.game_over)
            state.messages.append(
                ChatMessageUser(content=turn_message(game, min(turn, max_turns), max_turns, grace))
            )
            last_error = False
            for _ in range(iterations):
                output = await model.generate(state.messages, state.tools)
                state.output = output
                state.messages.append(output.message)
                if not output.message.tool_calls:
                    break
                result = await execute_tools(state.messages, state.tools)
                state.messages.extend(result.messages)
                last_error = any(
                    isinstance(m, ChatMessageTool) and m.error is not None for m in result.messages
                )
                if game.game_over:
                    break
            changed = (len(game.deployments), game.game_over) != before
            loop["idle"] = 0 if changed else loop["idle"] + 1
            loop["errors"] = loop["errors"] + 1 if last_error else 0
            if loop["idle"] >= idle_limit or loop["errors"] >= error_limit:
                break
        auto_submit(game)
        if reflect:
            await _reflect(state, game)

    return solve


def _track_episode(cp: Checkpointer, state: TaskState, counters: dict[str, int]
                   ) -> dict[str, int]:
    """Register the episode's state with the checkpointer; on a resume, get it back.

    The conversation and the last output are restored in place; the loop counters come
    back as the returned dict (the caller mutates it; each checkpoint saves a copy).
    The game is not here: it is rebuilt from the store by the task's ``on_resume``.
    """
    state.messages = cp.track("messages", lambda: state.messages, state.messages,
                              value_type=list[ChatMessage])
    state.output = cp.track("output", lambda: state.output, state.output)
    live = cp.track("causalgame_loop", lambda: dict(live), dict(counters),
                    value_type=dict[str, int])
    return live


async def _reflect(state: TaskState, game: Game) -> None:
    """Ask for the plain-text report; an unsubmitted (N/A) run is asked about its findings."""
    if game.final is None:
        prompt = (
            "The episode ended without a final submission (it counts as N/A). Without "
            "calling tools, answer in plain text: what did you find about the causes of "
            "drone losses, and which design would you have submitted?"
        )
    else:
        prompt = reflection_prompt(game)
    state.messages.append(ChatMessageUser(content=prompt))
    # tools stay listed (tool_choice none): the prompt keeps the episode's prefix
    output = await get_model().generate(state.messages, state.tools, tool_choice="none")
    state.output = output
    state.messages.append(output.message)
    state.store.set(REPORT_STORE_KEY, output.completion)


OPENCODE_NUDGE = (
    "Continue with the tools (deploy_drone, analyze, ...) and call submit_final_design "
    "when you are done."
)


@solver
def opencode_agent(max_steps: int = 60, idle_limit: int = 3, reflect: bool = True) -> Solver:
    """OpenCode-style agent: one free-running tool loop (see the module docstring).

    Args:
        max_steps: Model calls before the loop stops.
        idle_limit: Consecutive replies without a tool call before it stops.
        reflect: Ask for the reflection report after the submission.
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        async with checkpointer() as cp:
            loop = _track_episode(cp, state, {"step": 0, "idle": 0})
            if cp.attempt != "resume_for_scoring":
                await _steps(cp, state, loop)
        return state

    async def _steps(cp: Checkpointer, state: TaskState, loop: dict[str, int]) -> None:
        game = current_game()
        model = get_model()
        while loop["step"] < max_steps:
            await cp.tick()  # a step boundary: messages, counters and game log agree
            loop["step"] += 1
            output = await model.generate(state.messages, state.tools)
            state.output = output
            state.messages.append(output.message)
            if not output.message.tool_calls:
                loop["idle"] += 1
                if loop["idle"] >= idle_limit:
                    break
                state.messages.append(ChatMessageUser(content=OPENCODE_NUDGE))
                continue
            loop["idle"] = 0
            result = await execute_tools(state.messages, state.tools)
            state.messages.extend(result.messages)
            if game.game_over:
                break
        auto_submit(game)
        if reflect:
            await _reflect(state, game)

    return solve


def prompting_message(game: Game) -> str:
    """The prompting mode's one user message: action space, status and all visible history."""
    from benchmarks.causalgame.tools import history_csv

    records = game.visible_history()
    history = history_csv(records) if records else "(no historical flight logs)\n"
    return (
        "Prompting mode: you cannot deploy test drones. Everything available is below.\n"
        f"Action space:\n{json.dumps(game.action_space(), indent=1)}\n\n"
        f"Historical flight logs ({len(records)} visible records, CSV):\n{history}\n"
        "Analyse the data, state your causal reasoning, then give your final design as the "
        "LAST thing in your reply, one JSON object on its own line, e.g.\n"
        '{"design": {"antenna_def": 10, "engine_def": 20}, "equipment": {}}'
    )


def parse_design(text: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The last JSON object in ``text`` that holds a design (``{"design": ...}`` or a flat
    mapping of ``*_def`` keys); None when there is none."""
    decoder = json.JSONDecoder()
    found: tuple[dict[str, Any], dict[str, Any]] | None = None
    i = 0
    while (i := text.find("{", i)) >= 0:
        try:
            obj, length = decoder.raw_decode(text[i:])
        except json.JSONDecodeError:
            i += 1
            continue
        i += length  # an object's inner braces are part of it, not candidates of their own
        if not isinstance(obj, dict):
            continue
        if isinstance(obj.get("design"), dict):
            equipment = obj.get("equipment")
            found = (obj["design"], equipment if isinstance(equipment, dict) else {})
        elif obj and all(str(k).endswith("_def") for k in obj):
            found = (obj, {})
    return found


@solver
def prompting_solver(reflect: bool = True) -> Solver:
    """Prompting mode: one call answers a design from the briefing and the history.

    A reply without a usable design is left unsubmitted: N/A under ``protocol=published``,
    auto-submitted (the default design, marked) under the suite protocol.

    Args:
        reflect: Ask for the reflection report after the submission.
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        game = current_game()
        state.messages.append(ChatMessageUser(content=prompting_message(game)))
        output = await get_model().generate(state.messages)
        state.output = output
        state.messages.append(output.message)
        parsed = parse_design(output.completion)
        if parsed is not None:
            try:
                game.submit(parsed[0], parsed[1] or None)
            except GameError as exc:
                state.metadata["causalgame_submit_error"] = str(exc)
        auto_submit(game)
        if reflect:
            await _reflect(state, game)
        return state

    return solve
