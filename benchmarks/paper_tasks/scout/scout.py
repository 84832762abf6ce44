"""SCOUT games: FrozenLake, Sokoban and the 3 x 3 sliding puzzle as multi-turn tool tasks.

"SCOUT: Sub-Scale Collaboration On Unseen Tasks" (ICML 2026; repo Harry-mic/SCOUT): an
LLM is poor at symbolic and spatial games because exploring them by trial and error is
too expensive for it; small scouts explore instead, and their trajectories teach the LLM
(SFT, then multi-turn RL). Here each sample is one seeded instance from
``environments/scout`` (solvable by construction, its optimal length found by BFS). The
model sees the rules and the board, and each turn must call ``move(direction)``; the tool
answers with the outcome and the next board. The episode ends at the goal, in a hole, or
at the move limit (``limit_factor`` x optimal + ``limit_extra``). The scorer replays the
recorded moves with the exact verifier.

Splits: ``train`` instances use seeds ``seed + i``, ``test`` instances ``1_000_000 + seed
+ i`` (unseen by anything trained on ``train``); sample ids are ``<game>-<split>-s<seed>``.

    inspect eval benchmarks/paper_tasks/scout/scout.py --model whitebox/smollm2-135m -T n=4
    inspect eval harness/scout --model whitebox/tinylm -M recipe=scout-sft -T split=test
    harness study run methods/studies/scout/study.yaml
"""

from __future__ import annotations

import time
from typing import Any, Literal

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    execute_tools,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolFunction

from benchmarks.paper_tasks.scout.scorer import MODEL_S_KEY, scout_score
from benchmarks.paper_tasks.scout.tools import (
    INVALID_KEY,
    LIMIT_KEY,
    MOVES_KEY,
    SPEC_KEY,
    current_state,
    move,
    move_info,
)
from environments.scout import GAMES, Game, generate, make_game, shortest_path
from harness.plugins.benchmark import benchmark

DEFAULT_GAMES = "frozenlake,sokoban,sliding"
DEFAULT_N = 8
DEFAULT_SEED = 0
DEFAULT_LIMIT_FACTOR = 2.0
DEFAULT_LIMIT_EXTRA = 4
DEFAULT_MAX_TOKENS = 24
TEST_OFFSET = 1_000_000
"""Test instances are drawn from seeds a million above the training ones: unseen."""
START = "new game"
SIMULATOR = "environments.scout:make_game"
"""Named in the task's metadata so a recipe (which may not import environments) can
rebuild a sample's game from its spec."""
SYSTEM = "{rules}\nEach turn, call the move tool with one direction."
VERSION = "1.0.0"

Split = Literal["train", "test"]

GAME_OPTIONS: dict[str, dict[str, Any]] = {
    "frozenlake": {"size": 4, "p_hole": 0.2},
    "sokoban": {"height": 4, "width": 4, "boxes": 1, "inner_walls": 1, "min_moves": 3},
    "sliding": {"depth": 6, "min_moves": 4},
}
"""Instance sizes per family: small enough that a 135M model's episode is short and a
tabular scout learns an instance in well under a second."""


def instance_seed(split: str, seed: int, i: int) -> int:
    """The generator seed of instance ``i`` of ``split``."""
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    return (TEST_OFFSET if split == "test" else 0) + seed + i


def record_to_sample(record: dict[str, Any], limit_factor: float = DEFAULT_LIMIT_FACTOR,
                     limit_extra: int = DEFAULT_LIMIT_EXTRA) -> Sample:
    """An instance record (``{"spec", "split", "seed"}``) as a sample: the rules as the
    system turn, the first board as the user turn, the spec and optimum in metadata."""
    game = make_game(record["spec"])
    path = shortest_path(game)
    if path is None:
        raise ValueError(f"instance {record['spec']} has no solution")
    limit = int(limit_factor * len(path)) + int(limit_extra)
    return Sample(
        id=f"{game.name}-{record['split']}-s{record['seed']}",
        input=[ChatMessageSystem(content=SYSTEM.format(rules=game.rules)),
               ChatMessageUser(content=game.observe(game.initial(), START))],
        target=" ".join(path),
        metadata={"game": game.name, "spec": game.spec(), "optimal": len(path),
                  "move_limit": limit, "split": record["split"], "seed": record["seed"]},
    )


def _games(games: str | list[str]) -> list[str]:
    names = [g.strip() for g in (games.split(",") if isinstance(games, str) else games)]
    names = [g for g in names if g]
    unknown = [g for g in names if g not in GAMES]
    if unknown or not names:
        raise ValueError(f"unknown games {unknown or names}: choose from {', '.join(GAMES)}")
    return names


def _window(system: str, observation: str) -> list[ChatMessage]:
    return [ChatMessageSystem(content=system), ChatMessageUser(content=observation)]


def _tool_text(message: ChatMessageTool) -> str | None:
    return None if message.error else message.text


@solver
def play(temperature: float = 0.0, max_tokens: int = DEFAULT_MAX_TOKENS) -> Solver:
    """Turn by turn: show the model the rules and the latest board, require a ``move``
    call, run it, repeat until the episode ends or the move limit is reached.

    The full exchange is kept in ``state.messages`` (the transcript); each request holds
    only the system turn and the current board, as the games are Markov.
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        spec = state.metadata["spec"]
        game: Game = make_game(spec)
        limit = int(state.metadata["move_limit"])
        state.store.set(SPEC_KEY, spec)
        state.store.set(MOVES_KEY, [])
        state.store.set(LIMIT_KEY, limit)
        state.store.set(INVALID_KEY, 0)
        state.store.set(MODEL_S_KEY, 0.0)
        system = state.messages[0].text
        observation = state.messages[-1].text
        tools = [move()]
        model = get_model()
        config = GenerateConfig(temperature=temperature, max_tokens=max_tokens)
        for _ in range(limit):
            started = time.perf_counter()
            output = await model.generate(_window(system, observation), tools=tools,
                                          tool_choice=ToolFunction("move"), config=config)
            state.store.set(MODEL_S_KEY,
                            state.store.get(MODEL_S_KEY) + time.perf_counter() - started)
            state.output = output
            state.messages.append(output.message)
            calls = output.message.tool_calls or []
            board = current_state(game, state.store.get(MOVES_KEY))
            if not calls:
                state.store.set(INVALID_KEY, state.store.get(INVALID_KEY) + 1)
                observation = game.observe(board, "invalid: no move was made; call the "
                                           "move tool")
                state.messages.append(ChatMessageUser(content=observation))
                continue
            result = await execute_tools(state.messages, tools)
            state.messages.extend(result.messages)
            results = [m for m in result.messages if isinstance(m, ChatMessageTool)]
            texts = [_tool_text(m) for m in results]
            if any(t is None for t in texts):
                state.store.set(INVALID_KEY, state.store.get(INVALID_KEY) + 1)
            board = current_state(game, state.store.get(MOVES_KEY))
            valid = [t for t in texts if t is not None]
            observation = valid[-1] if valid else game.observe(
                board, "invalid: the call did not parse; call move with a direction")
            moves = state.store.get(MOVES_KEY)
            if game.terminal(board) or len(moves) >= limit:
                break
        return state

    return solve


@benchmark("scout")
@task
def scout(
    games: str = DEFAULT_GAMES,
    n: int = DEFAULT_N,
    split: Split = "test",
    seed: int = DEFAULT_SEED,
    limit_factor: float = DEFAULT_LIMIT_FACTOR,
    limit_extra: int = DEFAULT_LIMIT_EXTRA,
    temperature: float = 0.0,
    max_tokens: int = DEFAULT_MAX_TOKENS,
) -> Task:
    """Seeded game instances played through a ``move`` tool, scored by the exact verifier.

    Args:
        games: Comma-separated families (frozenlake, sokoban, sliding).
        n: Instances per family.
        split: ``test`` (unseen seeds, what studies score) or ``train`` (what recipes
            learn from).
        seed: First instance seed within the split.
        limit_factor: Move limit = limit_factor x optimal length + limit_extra.
        limit_extra: See ``limit_factor``.
        temperature: Sampling temperature of each move (0: greedy).
        max_tokens: Tokens per move reply.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    records = [
        {"spec": generate(g, instance_seed(split, seed, i), **GAME_OPTIONS[g]).spec(),
         "split": split, "seed": instance_seed(split, seed, i)}
        for g in _games(games) for i in range(n)
    ]
    samples = [record_to_sample(r, limit_factor, limit_extra) for r in records]
    return Task(
        dataset=MemoryDataset(samples, name=f"scout-{split}-s{seed}"),
        solver=play(temperature, max_tokens),
        scorer=scout_score(),
        version=VERSION,
        metadata={"benchmark": "scout", "simulator": SIMULATOR,
                  "tool": move_info().model_dump(exclude_none=True)},
    )
