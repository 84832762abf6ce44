"""The benchmark's default agent: the original harness's turn protocol (spec 11, hybrid).

Turns are counted by the harness, not the model: each turn opens with a status line, the
model gets up to ``iterations`` tool-calling rounds, and the episode ends on submission,
the turn limit (deploy budget + 10) plus up to 3 grace turns, 10 idle turns, or 5 turns
that end in an error. Unlike the released harness, a run that never submits is
auto-submitted with its best observed design (marked ``auto_submitted``), so every run
has a score. A reflection report is requested after the submission.
"""

from __future__ import annotations

from inspect_ai.model import ChatMessageTool, ChatMessageUser, execute_tools, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from benchmarks.causalgame.session import current_game
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
            "best design; otherwise your best observed design is auto-submitted."
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


def auto_submit(game: Game) -> None:
    """Submit the best observed design (or the default design if nothing was deployed)."""
    if game.game_over:
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
) -> Solver:
    """The turn-based tool-calling agent of the benchmark (see module docstring).

    Args:
        iterations: Model calls per turn (each may hold several tool calls).
        grace_turns: Extra turns after the turn limit or the drone budget runs out.
        idle_limit: Stop after this many turns without a deploy or a submission.
        error_limit: Stop after this many consecutive turns ending in a tool error.
        reflect: Ask for the reflection report after the submission.
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        game = current_game()
        model = get_model()
        max_turns = MAX_DEPLOYS + 10
        idle = errors = grace_used = 0
        turn = 0
        while not game.game_over:
            turn += 1
            grace = turn > max_turns or game.drones_remaining <= 0
            if grace:
                grace_used += 1
                if grace_used > grace_turns:
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
            idle = 0 if (len(game.deployments), game.game_over) != before else idle + 1
            errors = errors + 1 if last_error else 0
            if idle >= idle_limit or errors >= error_limit:
                break
        auto_submit(game)
        if reflect:
            state.messages.append(ChatMessageUser(content=reflection_prompt(game)))
            # tools stay listed (tool_choice none): the prompt keeps the episode's prefix
            output = await model.generate(state.messages, state.tools, tool_choice="none")
            state.output = output
            state.messages.append(output.message)
            state.store.set(REPORT_STORE_KEY, output.completion)
        return state

    return solve
