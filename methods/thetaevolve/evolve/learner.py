"""What a ThetaEvolve search hands a test-time learner, and what it needs back.

Why a module of its own: the search (:mod:`methods.thetaevolve.thetaevolve`) and the learner
(:mod:`methods.thetaevolve.ttrl`) both speak in these types; kept here, below both, the learner
imports no part of the search, and the search imports the learner only when a run asks for
test-time RL (it needs torch).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["RLSettings", "Rollout", "RolloutSink", "StepLearner"]


@dataclass(frozen=True)
class Rollout:
    """One response as an RL sample: what the policy saw, what it said, what it earned."""

    run_key: str
    candidate_id: str
    step: int
    parent_id: str
    prompt: list[dict[str, str]]
    response: str
    reward: float
    outcome: str


RolloutSink = Callable[[Rollout], Awaitable[None] | None]
"""Receives every rollout as soon as it is scored (a trainer's queue, a file, a list)."""


@dataclass(frozen=True)
class RLSettings:
    """Test-time RL between steps (see :mod:`methods.thetaevolve.ttrl`); part of the run key."""

    algo: str = "grpo"
    lr: float = 1e-5
    updates_per_step: int = 1
    trainable: str = "top:4"
    kl_coef: float = 0.0
    clip_eps: float = 0.2
    tau: float = 1.0
    threads: int = 1
    max_response_tokens: int = 512


class StepLearner(Protocol):
    """What the run needs from a test-time learner
    (:class:`methods.thetaevolve.ttrl.TestTimeRL`)."""

    def generate(self, prompts: list[list[dict[str, str]]], seeds: list[int],
                 temperature: float, max_tokens: int) -> list[tuple[str, int, int]]: ...

    def update(self, step: int, rollouts: list[Rollout]) -> dict[str, Any]: ...

    def restore(self, done_step: int,
                rollouts: dict[int, list[Rollout]]) -> list[dict[str, Any]]: ...

    def summary(self) -> dict[str, Any]: ...
