"""Scoring: Stage-2 survival and victory, the report rubric, and the failure mode.

Survival is the benchmark metric (1,000 fresh drones, common random numbers per seed).
The rubric is graded by the ``judge`` model role when one is bound
(``--model-role judge=...``), else by the deterministic keyword stand-in; the grader used
is recorded in the score metadata. Epoch values are kept by the reducer so the metrics can
report a t interval over all (scenario, epoch) episodes, clustered by scenario.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
from inspect_ai.model import Model, get_model, model_roles
from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    ScoreReducer,
    Target,
    metric,
    score_reducer,
    scorer,
)
from inspect_ai.solver import TaskState

from benchmarks.causalgame.agent import REPORT_STORE_KEY
from benchmarks.causalgame.session import current_game, release_game
from environments.causalgame import Game
from environments.causalgame.rubric import (
    CRITERIA,
    GROUND_TRUTH,
    VERDICTS,
    failure_mode,
    family_key,
    keyword_verdicts,
    weighted_score,
)
from harness.stats import mean_ci

KEYS = ("survival", "victory", "rubric")


def judge_prompt(game: Game, report: str, trajectory: str) -> str:
    """The rubric prompt for a judge model (ground truth written per family)."""
    criteria = "\n".join(f"- {c.id} ({c.dimension}, weight {c.weight}): {c.text}" for c in CRITERIA)
    return (
        "You grade an AI agent's investigation of a causal drone-design game.\n"
        f"Ground-truth report:\n{GROUND_TRUTH[family_key(game.scenario.family)]}\n\n"
        f"Criteria:\n{criteria}\n\nAgent trajectory (abridged):\n{trajectory[-6000:]}\n\n"
        f"Agent's final report:\n{report}\n\n"
        "Reply with a JSON object mapping each criterion id to SATISFIED, "
        "PARTIALLY_SATISFIED or NOT_SATISFIED."
    )


def parse_verdicts(text: str) -> dict[str, float]:
    """Criterion verdicts from a judge reply (missing or unreadable ones count as 0)."""
    match = re.search(r"\{.*\}", text, re.S)
    data: dict[str, Any] = {}
    if match:
        try:
            data = json.loads(match.group(0))
        except json.JSONDecodeError:
            data = {}
    return {c.id: VERDICTS.get(str(data.get(c.id, "")).upper().strip(), 0.0) for c in CRITERIA}


def _trajectory(state: TaskState) -> str:
    return "\n".join(f"{m.role}: {m.text[:400]}" for m in state.messages[1:])


async def grade_report(game: Game, report: str, state: TaskState) -> tuple[dict[str, float], str]:
    """Rubric verdicts and the grader's name."""
    if "judge" in model_roles():
        judge: Model = get_model(role="judge")
        reply = await judge.generate(judge_prompt(game, report, _trajectory(state)))
        return parse_verdicts(reply.completion), f"judge:{judge}"
    return keyword_verdicts(report, game.scenario.family, len(game.deployments)), "keywords"


@score_reducer(name="causalgame_mean")
def keep_epochs() -> ScoreReducer:
    """Mean over epochs, keeping every epoch's values in metadata for the t interval.

    Applies to every scorer of the task (Inspect has one reducer per task), so it averages
    whichever keys the scores carry: the game's, or the tool-call validity counts."""

    def reduce(scores: list[Score]) -> Score:
        values = [s.value for s in scores if isinstance(s.value, dict)]
        keys = list(values[0]) if values else list(KEYS)
        mean = {k: float(np.mean([float(v[k]) for v in values])) for k in keys}
        meta = dict(scores[0].metadata or {})
        meta["epoch_values"] = [{k: float(v[k]) for k in keys} for v in values]
        return Score(
            value=mean, metadata=meta, answer=scores[0].answer, explanation=scores[0].explanation
        )

    return reduce


def _pooled(scores: list[SampleScore], key: str) -> tuple[list[float], list[int]]:
    """Every epoch's value of ``key`` and the sample it belongs to."""
    values: list[float] = []
    clusters: list[int] = []
    for i, s in enumerate(scores):
        per_epoch = (s.score.metadata or {}).get("epoch_values")
        if per_epoch:
            values += [float(e[key]) for e in per_epoch]
            clusters += [i] * len(per_epoch)
        else:
            value = s.score.value
            values.append(float(value[key] if isinstance(value, dict) else value))  # type: ignore[arg-type]
            clusters.append(i)
    return values, clusters


@metric
def episode_mean(key: str) -> Metric:
    """Mean of ``key`` over all episodes (every epoch of every scenario)."""

    def compute(scores: list[SampleScore]) -> float:
        values, _ = _pooled(scores, key)
        return float(np.mean(values)) if values else float("nan")

    return compute


@metric
def ci95(key: str) -> Metric:
    """Half-width of the 95% t interval of ``key`` (clustered by scenario when pooled)."""

    def compute(scores: list[SampleScore]) -> float:
        values, clusters = _pooled(scores, key)
        if len(values) < 2:
            return float("nan")
        cluster = clusters if len(set(clusters)) > 1 else None
        est = mean_ci(values, cluster=cluster)
        return float((est.hi - est.lo) / 2)

    return compute


@scorer(
    metrics={
        "survival": [episode_mean("survival"), ci95("survival")],
        "victory": [episode_mean("victory")],
        "rubric": [episode_mean("rubric")],
    }
)
def causalgame_scorer() -> Scorer:
    """Stage-2 survival, victory and rubric score of the episode."""

    async def score(state: TaskState, target: Target) -> Score:
        game = current_game()
        try:
            final = game.final or {}
            report = str(state.store.get(REPORT_STORE_KEY) or state.output.completion or "")
            verdicts, grader = await grade_report(game, report, state)
            survival = float(final.get("survival", 0.0))
            return Score(
                value={
                    "survival": survival,
                    "victory": float(bool(final.get("victory"))),
                    "rubric": weighted_score(verdicts),
                },
                answer=json.dumps(game.final_design),
                explanation=f"{game.scenario.id}: Stage-2 survival {survival * 100:.1f}% "
                f"(threshold {game.scenario.threshold * 100:.0f}%)",
                metadata={
                    "scenario": game.scenario.id,
                    "seed": game.seed,
                    "compat": game.compat,
                    "auto_submitted": bool(final.get("auto_submitted", False)),
                    "drones_used": game.drones_used,
                    "deploys": len(game.deployments),
                    "verdicts": verdicts,
                    "grader": grader,
                    "failure_mode": failure_mode(verdicts),
                },
            )
        finally:
            release_game()

    return score
