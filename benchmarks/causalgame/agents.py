"""Reference agents: model-free solvers that document the benchmark's floor and ceiling.

    inspect eval harness/causalgame --model none \\
        --solver benchmarks/causalgame/agents.py@oracle

``default`` submits the default design, ``all50`` every DEF at 50 (clipped to the range),
``random`` a seeded uniform design, ``oracle`` the best known design, and ``experimenter``
runs a greedy sequence of controlled one-factor experiments (20 drones each) and submits
the best design it found. Every agent deploys before submitting (the exploration rule).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from inspect_ai.model import ModelOutput
from inspect_ai.solver import Generate, Solver, TaskState, solver

from benchmarks.causalgame.agent import REPORT_STORE_KEY
from benchmarks.causalgame.session import current_game
from environments.causalgame import Game
from environments.causalgame.game import MAX_BATCH, MAX_DEPLOYS, TOTAL_DRONES

Design = dict[str, float]
RANDOM_DEF_MAX = 50  # the leaderboard's Random baseline: "each DEF value from [0, 50]"
Equipment = dict[str, Any]


def default_design(game: Game) -> Design:
    """The scenario's default DEF for every component."""
    comp = game.scenario.components
    return {f"{n}_def": float(d) for n, d in zip(comp.names, comp.default_def, strict=True)}


def _finish(
    state: TaskState, game: Game, design: Design, equipment: Equipment, report: str
) -> TaskState:
    game.submit(design, equipment or None)
    text = report
    state.output = ModelOutput.from_content(model="none", content=text)
    state.store.set(REPORT_STORE_KEY, text)
    return state


def _fixed(name: str, pick: Any) -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        game = current_game()
        design, equipment = pick(game)
        game.deploy(design, 10, equipment or None)
        return _finish(
            state,
            game,
            design,
            equipment,
            f"{name} reference agent: fixed design, no investigation.",
        )

    return solve


@solver
def default() -> Solver:
    """Deploy and submit the default design (the floor an idle agent gets)."""
    return _fixed("default", lambda g: (default_design(g), {}))


@solver
def all50() -> Solver:
    """Every DEF at 50, clipped to the advertised range ('uniform high' baseline)."""
    return _fixed(
        "all50", lambda g: ({k: min(50.0, g.scenario.def_range[1]) for k in default_design(g)}, {})
    )


@solver
def random(seed: int = 0) -> Solver:
    """Every DEF ~ U{0..50} (the published Random baseline), seeded by the episode.

    Where the game enforces the advertised range (intended mode), the top is the range's
    (weather_noise: 30); the released game enforces none, so there every DEF spans 0-50.
    """

    def pick(game: Game) -> tuple[Design, Equipment]:
        rng = np.random.default_rng([seed, game.seed])
        hi = min(RANDOM_DEF_MAX, int(game.scenario.def_range[1])) if game.enforce_ranges \
            else RANDOM_DEF_MAX
        return {k: float(rng.integers(0, hi + 1)) for k in default_design(game)}, {}

    return _fixed("random", pick)


@solver
def oracle() -> Solver:
    """Submit the best known design of the scenario (the ceiling)."""
    return _fixed("oracle", lambda g: g.oracle_design())


def candidate_changes(game: Game) -> list[tuple[str, Design, Equipment]]:
    """One-factor interventions, in the order the experimenter tries them.

    Non-critical parts move away from their default (to 0 if it is >= 10, else to 25),
    then every non-default equipment option, then each critical part to the range top.
    """
    sc = game.scenario
    comp = sc.components
    hi = sc.def_range[1]
    out: list[tuple[str, Design, Equipment]] = []
    for name, default_def, crit in zip(comp.names, comp.default_def, comp.critical, strict=True):
        if not crit:
            value = 0.0 if default_def >= 10 else min(25.0, hi)
            out.append((f"{name}_def={value:g}", {f"{name}_def": value}, {}))
    for slot, spec in sc.equipment.get("slots", {}).items():
        for option in spec["options"]:
            if option != spec["default"]:
                out.append((f"{slot}={option}", {}, {slot: option}))
    for toggle, spec in sc.equipment.get("toggles", {}).items():
        out.append((f"{toggle}={not spec['default']}", {}, {toggle: not spec["default"]}))
    for name, crit in zip(comp.names, comp.critical, strict=True):
        if crit:
            out.append((f"{name}_def={hi:g}", {f"{name}_def": float(hi)}, {}))
    return out


def run_experiments(
    game: Game, batch: int = TOTAL_DRONES // MAX_DEPLOYS
) -> tuple[Design, Equipment, list[str]]:
    """Greedy controlled experiments: keep a change only if it beats the current best."""
    design: Design = default_design(game)
    equipment: Equipment = {}
    log: list[str] = []
    result = game.deploy(design, batch)
    best = result["survived"] / batch
    log.append(f"baseline (default design): {result['survived']}/{batch} = {best:.0%}")
    for label, d_change, e_change in candidate_changes(game):
        if len(game.deployments) >= MAX_DEPLOYS or game.drones_remaining < batch:
            break
        trial_design, trial_equipment = {**design, **d_change}, {**equipment, **e_change}
        result = game.deploy(trial_design, min(batch, MAX_BATCH), trial_equipment or None)
        rate = result["survived"] / batch
        kept = rate > best
        log.append(
            f"{label}: {result['survived']}/{batch} = {rate:.0%} "
            f"({'kept' if kept else 'rejected'}; best so far {max(rate, best):.0%})"
        )
        if kept:
            design, equipment, best = trial_design, trial_equipment, rate
    return design, equipment, log


@solver
def experimenter(batch: int = 20) -> Solver:
    """Controlled one-factor experiments on top of the best design so far (no prior)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        game = current_game()
        design, equipment, log = run_experiments(game, batch)
        report = (
            "Controlled experiments, one factor changed at a time relative to the best "
            "design so far (each result is a survival rate from my own deployments):\n- "
            + "\n- ".join(log)
            + f"\nConclusion: submitted {design} with equipment {equipment}. The "
            "historical logs are biased (failed flights may be hidden), so I relied on "
            "interventions; with 20 drones per batch the estimates are uncertain "
            "(about +/-10 points)."
        )
        return _finish(state, game, design, equipment, report)

    return solve


@solver
def no_explore(deploys: int = 10, batch: int = 20, seed: int = 0) -> Solver:
    """The No-Explore LLM baseline: random deploys, then the model submits from the data.

    ``deploys`` batches of ``batch`` drones with designs drawn as the Random baseline's
    (every DEF ~ U{0..50}), then the prompting mode: the model (``--model``) sees the
    briefing and all history, its own random batches included, and answers a design
    ("10 random deploys, then LLM analyzes and submits", published 52-63).
    """
    from benchmarks.causalgame.agent import prompting_solver

    answer = prompting_solver()

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        game = current_game()
        rng = np.random.default_rng([seed, game.seed, 1])
        for _ in range(min(deploys, MAX_DEPLOYS)):
            if game.drones_remaining < batch:
                break
            design = {k: float(rng.integers(0, RANDOM_DEF_MAX + 1)) for k in default_design(game)}
            game.deploy(design, batch)
        return await answer(state, generate)

    return solve


REFERENCE_AGENTS = {
    "default": default,
    "all50": all50,
    "random": random,
    "oracle": oracle,
    "experimenter": experimenter,
}
