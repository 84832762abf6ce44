"""Outcomes of one proposal and the reward a policy would be trained on.

ThetaEvolve's lazy penalties make doing nothing cost more than trying and failing:
no applicable diff -0.4, a child identical to its parent -0.3, a child that fails to run
-0.2. A child that runs is rewarded with its fitness (``combined_score``, 0 when the
verifier rejects its solution), optionally shaped as
``r = scale * ((clip(s, lo, hi) - lo) / (hi - lo)) ** power`` (5 and 3 in the paper), which
spreads the rewards of near-best programs apart.

Optional and not in the paper: ``format_weight > 0`` adds ``format_weight * credit`` to
the no-diff penalty, ``credit`` in ``[0, 1]`` being the graded format credit of
:mod:`methods.thetaevolve.evolve.format_credit`, so that a tiny model's groups of no-diff
responses are not all tied at -0.4 (a tie gives test-time RL zero advantage).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Outcome(StrEnum):
    """What became of one model response."""

    NO_DIFF = "no_diff"
    IDENTICAL = "identical"
    EXEC_ERROR = "exec_error"
    INVALID = "invalid"
    VALID = "valid"


PENALTIES: dict[Outcome, float] = {
    Outcome.NO_DIFF: -0.4,
    Outcome.IDENTICAL: -0.3,
    Outcome.EXEC_ERROR: -0.2,
}


@dataclass(frozen=True)
class RewardConfig:
    """Reward shaping: off by default (the reward is then the raw fitness)."""

    shaping: bool = False
    lo: float = 0.0
    hi: float = 1.0
    scale: float = 5.0
    power: float = 3.0
    format_weight: float = 0.0

    def __post_init__(self) -> None:
        if self.hi <= self.lo:
            raise ValueError(f"reward shaping needs hi > lo, got lo={self.lo} hi={self.hi}")
        if not 0.0 <= self.format_weight <= 0.1:
            raise ValueError(f"format_weight must be in [0, 0.1] (a no-diff response must stay "
                             f"below the -0.3 of an identical child), got {self.format_weight}")


def shaped_reward(score: float, config: RewardConfig) -> float:
    """``scale * ((clip(score) - lo) / (hi - lo)) ** power``."""
    clipped = min(max(score, config.lo), config.hi)
    return config.scale * ((clipped - config.lo) / (config.hi - config.lo)) ** config.power


def reward_for(outcome: Outcome, score: float | None, config: RewardConfig,
               credit: float = 0.0) -> float:
    """The reward of one response: a lazy penalty, or the (shaped) fitness of its child.

    ``credit`` (format credit in ``[0, 1]``) only counts for a no-diff response, weighted
    by ``config.format_weight`` (0 by default: the paper's penalties exactly)."""
    if not 0.0 <= credit <= 1.0:
        raise ValueError(f"format credit must be in [0, 1], got {credit}")
    if outcome is Outcome.NO_DIFF:
        return PENALTIES[outcome] + config.format_weight * credit
    if outcome in PENALTIES:
        return PENALTIES[outcome]
    fitness = score if score is not None and outcome is Outcome.VALID else 0.0
    return shaped_reward(fitness, config) if config.shaping else fitness
