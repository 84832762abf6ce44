"""The ``move`` tool: one step of the sample's game, its state kept in the sample's store.

The tool holds no state of its own: it rebuilds the instance from its spec and replays the
moves made so far (microseconds for these games), so the store's move list is the whole
truth the scorer verifies.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.tool import Tool, ToolDef, ToolInfo, tool
from inspect_ai.util import store

from environments.scout import Game, make_game

__all__ = ["INVALID_KEY", "LIMIT_KEY", "MOVES_KEY", "SPEC_KEY", "current_state", "move",
           "move_info"]

SPEC_KEY = "scout_spec"
MOVES_KEY = "scout_moves"
LIMIT_KEY = "scout_move_limit"
INVALID_KEY = "scout_invalid_calls"


def current_state(game: Game, moves: list[str]) -> Any:
    """The state after replaying ``moves`` (illegal ones leave it unchanged)."""
    state = game.initial()
    for action in moves:
        state = game.step(state, action).state
    return state


@tool
def move() -> Tool:
    async def execute(direction: str) -> str:
        """Make one move in the game.

        Args:
            direction: One of up, down, left, right.

        Returns:
            What happened, then the board after the move.
        """
        spec = store().get(SPEC_KEY)
        if spec is None:
            raise RuntimeError("the move tool runs only inside a scout game sample")
        game = make_game(spec)
        moves: list[str] = list(store().get(MOVES_KEY, []))
        state = current_state(game, moves)
        if len(moves) >= int(store().get(LIMIT_KEY, 10**9)):
            return game.observe(state, "illegal move: the move limit is reached")
        result = game.step(state, str(direction).strip().lower())
        moves.append(str(direction).strip().lower())
        store().set(MOVES_KEY, moves)
        return game.observe(result.state, result.outcome)

    return execute


def move_info() -> ToolInfo:
    """The tool as the model sees it (name, description, JSON schema of its argument)."""
    tdef = ToolDef(move())
    return ToolInfo(name=tdef.name, description=tdef.description,
                    parameters=tdef.parameters)
