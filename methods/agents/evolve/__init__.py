"""Building blocks of the program-evolution agents (ThetaEvolve): diffs, the program
database with islands, the checkpoint journal, rewards and prompts. Inspect-free except
where an agent needs the model (in :mod:`methods.agents.thetaevolve`)."""

from methods.agents.evolve.database import Database, Program
from methods.agents.evolve.diff import DiffBlock, DiffError, apply_diff, parse_diff
from methods.agents.evolve.journal import Journal
from methods.agents.evolve.rewards import (
    PENALTIES,
    Outcome,
    RewardConfig,
    reward_for,
    shaped_reward,
)

__all__ = [
    "PENALTIES",
    "Database",
    "DiffBlock",
    "DiffError",
    "Journal",
    "Outcome",
    "Program",
    "RewardConfig",
    "apply_diff",
    "parse_diff",
    "reward_for",
    "shaped_reward",
]
