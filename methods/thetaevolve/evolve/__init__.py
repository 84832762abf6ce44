"""Building blocks of the program-evolution agents (ThetaEvolve): diffs, the program
database with islands (and MAP-Elites grids), the edit classifier (diff, full rewrite, or
nothing), the checkpoint journal, rewards and prompts. Inspect-free except
where an agent needs the model (in :mod:`methods.thetaevolve.thetaevolve`)."""

from methods.thetaevolve.evolve.database import Database, Program
from methods.thetaevolve.evolve.diff import DiffBlock, DiffError, apply_diff, parse_diff
from methods.thetaevolve.evolve.edits import EDIT_KINDS, Edit, classify, edit_shares, rewrite_child
from methods.thetaevolve.evolve.format_credit import FormatCredit, format_credit
from methods.thetaevolve.evolve.journal import Journal
from methods.thetaevolve.evolve.rewards import (
    PENALTIES,
    Outcome,
    RewardConfig,
    reward_for,
    shaped_reward,
)

__all__ = [
    "EDIT_KINDS",
    "PENALTIES",
    "Database",
    "DiffBlock",
    "DiffError",
    "Edit",
    "FormatCredit",
    "Journal",
    "Outcome",
    "Program",
    "RewardConfig",
    "apply_diff",
    "classify",
    "edit_shares",
    "format_credit",
    "parse_diff",
    "reward_for",
    "rewrite_child",
    "shaped_reward",
]
