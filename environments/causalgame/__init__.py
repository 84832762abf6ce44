"""CausalGame: a seeded, vectorised re-implementation of the drone-design causal game.

Pure numpy; no Inspect imports (the benchmark in ``benchmarks/causalgame`` adapts it).
"""

from environments.causalgame.game import Game, GameError
from environments.causalgame.scenarios import (
    Scenario,
    load_scenario,
    scenario_ids,
    scenario_record,
)
from environments.causalgame.sim import simulate, survival_rate

__all__ = [
    "Game",
    "GameError",
    "Scenario",
    "load_scenario",
    "scenario_ids",
    "scenario_record",
    "simulate",
    "survival_rate",
]
