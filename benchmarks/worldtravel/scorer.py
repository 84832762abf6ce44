"""WorldTravel scorer: the independent checker on the submitted itinerary.

Per sample: ``delivered`` (a parseable itinerary), ``feasible`` (every constraint passes:
the headline, TravelPlanner's final pass) and ``micro`` (passed / applicable
constraints); the metadata keeps the per-constraint report, the cost and the tool calls.
Across samples: macro pass rate per constraint kind and category, TravelPlanner's six
rates (delivery, commonsense and hard micro (pooled) and macro, final pass), feasibility per
constraint-count bucket, the fitted planning horizon, and the cost gap to the CP-SAT
reference plan over feasible plans.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from inspect_ai.model import ChatMessageTool
from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    mean,
    metric,
    scorer,
    stderr,
)
from inspect_ai.solver import TaskState

from benchmarks.worldtravel.analysis import horizon_by_days
from benchmarks.worldtravel.analysis import planning_horizon as fitted_horizon
from environments.worldtravel import analysis
from environments.worldtravel.checker import check_plan
from environments.worldtravel.store import scenario_index, shipped_world

SUBMIT = "submit"


def _meta(scores: list[SampleScore]) -> list[dict[str, Any]]:
    return [s.score.metadata or {} for s in scores]


@metric
def macro_by_kind() -> Metric:
    """Share of plans passing all instances of each kind (``macro/<kind>``) and category."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        rows = [m.get("results", []) for m in _meta(scores)]
        kinds = analysis.macro_by_kind(rows, "kind")
        cats = analysis.macro_by_kind(rows, "category")
        return {
            **{f"macro/{k}": v for k, v in kinds.items()},
            **{f"category/{k}": v for k, v in cats.items()},
        }

    return compute


@metric
def travelplanner() -> Metric:
    """TravelPlanner's six rates (``tp/delivery_rate``, ``tp/commonsense_micro`` pooled,
    ``tp/commonsense_macro``, ``tp/hard_micro``, ``tp/hard_macro``, ``tp/final_pass``)."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        plans = [
            analysis.plan_counts(bool((s.score.metadata or {}).get("delivered",
                                                                   _value(s, "delivered"))),
                                 (s.score.metadata or {}).get("results", []))
            for s in scores
        ]
        return {f"tp/{k}": v for k, v in analysis.travelplanner_rates(plans).items()}

    return compute


def _value(score: SampleScore, key: str) -> float:
    value = score.score.value
    return float(value.get(key, 0.0)) if isinstance(value, dict) else 0.0


@metric
def feasibility_by_bucket() -> Metric:
    """Feasibility per constraint-count bucket (``feasible@5-9`` ...)."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        meta = _meta(scores)
        table = analysis.feasibility_by_bucket(
            [m.get("n_constraints", 0) for m in meta], [float(m.get("feasible", 0)) for m in meta]
        )
        return {f"feasible@{k}": v for k, v in table.items()}

    return compute


@metric
def planning_horizon() -> Metric:
    """Fitted constraint count where feasibility halves (absent when it never does),
    pooled (``horizon``) and within each trip length (``horizon@1d`` ...)."""

    def compute(scores: list[SampleScore]) -> dict[str, float | None]:
        meta = _meta(scores)
        counts = [m.get("n_constraints", 0) for m in meta]
        feasible = [float(m.get("feasible", 0)) for m in meta]
        out = {"horizon": fitted_horizon(counts, feasible)}
        if all("days" in m for m in meta):  # within each trip length too
            by = horizon_by_days(counts, [int(m["days"]) for m in meta], feasible)
            out |= {f"horizon@{k}": v for k, v in by.items() if k != "pooled"}
        return out

    return compute


@metric
def cost_gap() -> Metric:
    """Mean relative cost above the reference plan, over feasible plans only."""

    def compute(scores: list[SampleScore]) -> dict[str, float | None]:
        gaps = [m["cost_gap"] for m in _meta(scores) if m.get("cost_gap") is not None]
        return {"cost_gap": float(np.mean(gaps)) if gaps else None}

    return compute


@metric
def tool_calls() -> Metric:
    """Mean number of world tool calls per sample."""

    def compute(scores: list[SampleScore]) -> float:
        calls = [m.get("tool_calls", 0) for m in _meta(scores)]
        return float(np.mean(calls)) if calls else 0.0

    return compute


def count_tool_calls(state: TaskState) -> int:
    """World tool calls in the transcript (the submit call is not counted)."""
    return sum(isinstance(m, ChatMessageTool) and m.function != SUBMIT for m in state.messages)


def score_submission(scenario_id: str, submission: str) -> tuple[dict[str, float], dict[str, Any]]:
    """(value, metadata) of one submission: the scorer without Inspect state (testable)."""
    scenario = scenario_index()[scenario_id]
    report = check_plan(shipped_world(), scenario, submission)
    total = max(1, report["total"])
    gap = None
    if report["feasible"] and report["cost"] is not None and scenario.reference_cost:
        gap = (report["cost"] - scenario.reference_cost) / scenario.reference_cost
    value = {
        "delivered": float(report["delivered"]),
        "feasible": float(report["feasible"]),
        "micro": report["passed"] / total,
    }
    meta = {
        "delivered": report["delivered"],
        "n_constraints": scenario.n_constraints,
        "days": scenario.days,
        "feasible": report["feasible"],
        "passed": report["passed"],
        "total": report["total"],
        "cost": report["cost"],
        "reference_cost": scenario.reference_cost,
        "cost_gap": gap,
        "parse_errors": report["parse_errors"],
        "results": report["results"],
    }
    return value, meta


@scorer(
    metrics=[
        {
            "delivered": [mean(), stderr()],
            "feasible": [mean(), stderr()],
            "micro": [mean(), stderr()],
        },
        macro_by_kind(),
        travelplanner(),
        feasibility_by_bucket(),
        planning_horizon(),
        cost_gap(),
        tool_calls(),
    ]
)
def worldtravel_checker() -> Scorer:
    """Score the itinerary in the final answer with the deterministic checker."""

    async def score(state: TaskState, target: Target) -> Score:
        submission = state.output.completion if state.output else ""
        value, meta = score_submission(str(state.sample_id), submission)
        meta["tool_calls"] = count_tool_calls(state)
        failed = [r for r in meta["results"] if not r["passed"]]
        explanation = f"{meta['passed']}/{meta['total']} constraints pass" + "".join(
            f"\n- {r['id']} {r['kind']}: {r['reason']}" for r in failed[:10]
        )
        return Score(value=value, answer=submission[:2000], explanation=explanation, metadata=meta)

    return score
