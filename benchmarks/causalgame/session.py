"""Per-sample game sessions and the prompts built from them.

A ``Game`` holds numpy state that does not belong in Inspect's (JSON) store, so the store
keeps only a session key and the games live in this process-wide map. The scorer removes
a game once it has scored it.

Checkpointing (``-T checkpoint=...``): the store also keeps the game's constructor
arguments (``GAME_KEY``), and :func:`checkpoint_game` copies its action log into the store
before every checkpoint (``ACTIONS_KEY``). Inspect restores the store of a resumed sample;
:func:`resume_game` then rebuilds the game from the two by replay (``Game.replay``), so
the resumed episode goes on in the state, generator states included, that the checkpoint
saw.
"""

from __future__ import annotations

import json
import zlib

from inspect_ai.model import ChatMessageSystem, ChatMessageUser
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import ResumeReport, store

from environments.causalgame import Game

_GAMES: dict[str, Game] = {}
STORE_KEY = "causalgame:session"
PROTOCOL_KEY = "causalgame:protocol"
AUTO_SUBMIT_KEY = "causalgame:auto_submit"
GAME_KEY = "causalgame:game"
ACTIONS_KEY = "causalgame:actions"
PROTOCOLS = ("suite", "published")
"""``suite``: unsubmitted runs are auto-submitted (marked); ``published``: the leaderboard's
protocol (released game behaviour, unsubmitted runs are N/A)."""


def current_protocol() -> str:
    """The running sample's protocol (``suite`` outside a sample or when unset)."""
    try:
        return str(store().get(PROTOCOL_KEY) or "suite")
    except Exception:  # noqa: BLE001 - no sample context
        return "suite"


def auto_submit_setting() -> bool | None:
    """The running sample's ``auto_submit`` task option: None (the protocol and the agent
    decide: the benchmark's agents auto-submit under the suite protocol), True (every
    unsubmitted run is auto-submitted, whatever the agent or protocol) or False (never)."""
    try:
        value = store().get(AUTO_SUBMIT_KEY)
    except Exception:  # noqa: BLE001 - no sample context
        return None
    return None if value is None else bool(value)


def episode_seed(seed: int, scenario_id: str, epoch: int) -> int:
    """The seed of one (scenario, epoch) episode: same inputs, same game."""
    return zlib.crc32(f"{seed}:{scenario_id}:{epoch}".encode())


def current_game() -> Game:
    """The game of the running sample (``LookupError`` outside one)."""
    key = store().get(STORE_KEY)
    if key is None or key not in _GAMES:
        raise LookupError("no CausalGame session in this sample (start_game did not run)")
    return _GAMES[key]


def _register(state: TaskState, game: Game) -> None:
    """Make ``game`` the sample's game (a key of this sample's uuid and epoch)."""
    key = f"{state.uuid}:{state.epoch}"
    _GAMES[key] = game
    state.store.set(STORE_KEY, key)


async def checkpoint_game(state: TaskState) -> None:
    """``Task.on_checkpoint``: copy the game's action log into the store, which the
    checkpoint then saves (the game itself is not JSON)."""
    key = state.store.get(STORE_KEY)
    if key in _GAMES:
        state.store.set(ACTIONS_KEY, list(_GAMES[key].actions))


async def resume_game(state: TaskState, attempt: str) -> ResumeReport | None:
    """``Task.on_resume``: rebuild the game from the restored store by replaying its log.

    The restored ``STORE_KEY`` names the dead attempt's game; the rebuilt game replaces it
    under this attempt's key (and replaces the fresh game ``start_game`` made for it).
    ``transparent``: the model sees the conversation and the game as they were at the
    checkpoint, so there is nothing to tell it.
    """
    spec = state.store.get(GAME_KEY)
    if not isinstance(spec, dict):
        raise RuntimeError("CausalGame resume: the checkpoint holds no game spec")
    actions = list(state.store.get(ACTIONS_KEY) or [])
    game = Game(**spec).replay(actions)
    stale = state.store.get(STORE_KEY)
    if stale is not None:
        _GAMES.pop(stale, None)
    _register(state, game)
    return ResumeReport(transparent=True,
                        data={"attempt": attempt, "replayed_actions": len(actions)})


def release_game() -> None:
    """Forget the running sample's game (called by the scorer)."""
    key = store().get(STORE_KEY)
    if key is not None:
        _GAMES.pop(key, None)


def system_prompt(game: Game) -> str:
    """The rendered system prompt (spec 11): role, keys, protocol, defaults, options."""
    sc = game.scenario
    comp = sc.components
    lo, hi = sc.def_range
    defaults = ", ".join(
        f"{n}_def={d:g}" for n, d in zip(comp.names, comp.default_def, strict=True)
    )
    lines = [
        "You are a drone designer. Drones fly through a black-box canyon simulation; your job "
        "is to find the design that survives best, by experiment.",
        f"Valid design keys: {', '.join(f'{n}_def' for n in comp.names)} (DEF values "
        f"{lo:g}-{hi:g}, integers; advertised total DEF budget {sc.def_budget:g}). Component HP "
        "is fixed and hidden.",
        f"Default design: {defaults}.",
        "Strategy: observe the history, discover measurements, analyse, hypothesise, then "
        "test with controlled deployments.",
        "Stage 1: up to 200 drones in at most 10 deploy_drone calls of 1-50 drones each, "
        "plus the historical flight logs. Stage 2: submit_final_design once; 1,000 fresh "
        "drones fly your design.",
        f"Victory: Stage-2 survival >= {sc.threshold * 100:.0f}%.",
        "You may run Python (pandas/numpy) with the analyze tool; the data files are "
        "history.json, history.csv and status.json in the working directory.",
        *sc.prompt_notes,
    ]
    if sc.has_equipment:
        lines.append(
            "Equipment options (pass as `equipment` to deploy_drone / "
            "submit_final_design; actual effects may differ):\n"
            + json.dumps(game.action_space()["equipment"], indent=1)
        )
    return "\n".join(lines)


def opening_message(game: Game) -> str:
    """The first user message: history summary as the original harness computed it."""
    visible = game.visible_history()
    survived = sum(r["status"] == "RETURNED" for r in visible)
    rate = 100 * survived / len(visible) if visible else 0.0
    return (
        f"Found {len(visible)} prior flight logs. Global Survival Rate: {rate:.1f}% "
        f"({survived}/{len(visible)}). Begin your investigation."
    )


@solver
def start_game(
    scenario_id: str | None = None,
    seed: int = 0,
    compat: str = "intended",
    enforce_ranges: bool | None = None,
    enforce_budget: bool = False,
    protocol: str = "suite",
    auto_submit: bool | None = None,
) -> Solver:
    """Create the sample's game (scenario from ``metadata['scenario']``) and its prompts.

    ``auto_submit``: see :func:`auto_submit_setting` (kept in the sample's store)."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        sid = scenario_id or str(state.metadata["scenario"])
        game = Game(
            sid,
            seed=episode_seed(seed, sid, state.epoch),
            compat=compat,
            enforce_ranges=enforce_ranges,
            enforce_budget=enforce_budget,
        )
        _register(state, game)
        store().set(GAME_KEY, game.spec())
        store().set(PROTOCOL_KEY, protocol)
        store().set(AUTO_SUBMIT_KEY, auto_submit)
        state.messages = [
            ChatMessageSystem(content=system_prompt(game)),
            ChatMessageUser(content=opening_message(game)),
        ]
        return state

    return solve
