"""MedVersa scorer and metrics: unit-level means × 100 and Avg (spec §2.5).

The solver stores each unit's per-case scores in ``state.metadata["medversa"]``; the scorer
turns them into one dict-valued :class:`Score` per unit (the unit mean of every score), and
the metrics average those over units, as the released evaluator does. Avg is
``0.25·Eff + 0.25·Gen + 0.5·Loc``; fluency is not part of it.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    Value,
    metric,
    scorer,
)
from inspect_ai.solver import TaskState

from environments.medversa.metrics import avg_score


def _mean_of(key: str, scores: list[SampleScore], scale: float = 100.0) -> float:
    """Mean of one score key over units, × ``scale`` (NaN when no unit has it)."""
    values = [float(s.score.value[key]) for s in scores
              if isinstance(s.score.value, dict) and key in s.score.value]
    return scale * sum(values) / len(values) if values else float("nan")


def _unit_mean(key: str) -> Metric:
    def compute(scores: list[SampleScore]) -> Value:
        return _mean_of(key, scores)

    return compute


@metric
def efficacy() -> Metric:
    """Efficacy (reliability) × 100, mean over units."""
    return _unit_mean("efficacy")


@metric
def generality() -> Metric:
    """Generality × 100, mean over units."""
    return _unit_mean("generality")


@metric
def locality() -> Metric:
    """Locality × 100, mean over units."""
    return _unit_mean("locality")


@metric
def avg() -> Metric:
    """Spec Avg = ((Eff + Gen) / 2 + Loc) / 2 over the unit means × 100."""

    def compute(scores: list[SampleScore]) -> Value:
        return avg_score(_mean_of("efficacy", scores), _mean_of("generality", scores),
                         _mean_of("locality", scores))

    return compute


@metric
def fluency() -> Metric:
    """n-gram entropy × 100 (NaN when fluency was not sampled)."""
    return _unit_mean("fluency")


@metric
def retrieval_precision() -> Metric:
    """Share (× 100) of edit/paraphrase queries answered with exactly their own edit."""
    return _unit_mean("retrieval_precision")


@metric
def false_retrieval() -> Metric:
    """Share (× 100) of locality queries that were given some edit."""
    return _unit_mean("false_retrieval")


@metric
def locality_sample_weighted() -> Metric:
    """Locality × 100 weighted by cases instead of units (differs when the last batch is short)."""

    def compute(scores: list[SampleScore]) -> Value:
        total = n = 0.0
        for s in scores:
            value: Any = s.score.value
            k = float(value.get("n_cases", 1))
            total += k * float(value["locality"])
            n += k
        return 100 * total / n if n else float("nan")

    return compute


@scorer(metrics=[efficacy(), generality(), locality(), avg(), fluency(),
                 retrieval_precision(), false_retrieval(), locality_sample_weighted()])
def medversa_scorer() -> Scorer:
    """Reads the unit results the solver stored; one Score per unit."""

    async def score(state: TaskState, target: Target) -> Score:
        result = state.metadata.get("medversa")
        if not result:
            return Score(value={"efficacy": 0.0, "generality": 0.0, "locality": 0.0},
                         explanation="no MedVersa result: the solver did not run")
        means: dict[str, float] = dict(result["unit_means"])
        means["n_cases"] = float(len(result["scores"]))
        return Score(
            value=means,  # type: ignore[arg-type]
            answer=str(result.get("details", [{}])[0]),
            explanation=f"{result['variant']}: {len(result['scores'])} case(s), "
                        f"editor {result['editor']}",
            metadata={"variant": result["variant"], "scores": result["scores"],
                      "case_ids": result["case_ids"]},
        )

    return score
