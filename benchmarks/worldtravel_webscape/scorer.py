"""Webscape's own scorer: perception on the plan's decisive facts, and browsing effort.

Why next to the shared checker: feasibility alone cannot tell a misread fact from a bad
plan. ``perception`` is the share of the plan's decisive facts (those its feasibility
depends on through a per-record check, see
:mod:`environments.worldtravel.site.perception`) that the plan used correctly, overall
and per modality (text, layout, image); ``pages_visited`` and ``steps`` come from the
browsing agent's metadata when it ran (0 otherwise).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState

from environments.worldtravel.site import render_world
from environments.worldtravel.site.perception import perception
from environments.worldtravel.store import scenario_index, shipped_world

MODALITIES = ("text", "layout", "image")


@functools.cache
def fact_modality() -> dict[str, str]:
    """Fact key -> text/layout/image for the shipped world's site (rendered once)."""
    return {f.key: f.presentation for f in render_world(shipped_world()).facts}


def _mean(values: list[float]) -> float | None:
    return float(np.mean(values)) if values else None


@metric
def perception_rates() -> Metric:
    """Mean perception overall and per modality, over samples with a readable plan."""

    def compute(scores: list[SampleScore]) -> dict[str, float | None]:
        meta = [s.score.metadata or {} for s in scores]
        out: dict[str, float | None] = {
            "perception": _mean([m["perception"] for m in meta if m.get("perception") is not None])
        }
        for mod in MODALITIES:
            out[f"perception/{mod}"] = _mean(
                [m["by_modality"][mod] for m in meta if mod in m.get("by_modality", {})]
            )
        out["pages_visited"] = _mean([float(m.get("pages_visited", 0)) for m in meta])
        out["steps"] = _mean([float(m.get("steps", 0)) for m in meta])
        return out

    return compute


def perception_of(sample_id: str, submission: str) -> dict[str, Any]:
    """The perception report of one submission (testable without Inspect state)."""
    scenario = scenario_index()[sample_id]
    return perception(shipped_world(), scenario, submission, fact_modality())


@scorer(metrics=[perception_rates()])
def webscape_perception() -> Scorer:
    """Perception on the decisive facts and the browsing effort of one sample."""

    async def score(state: TaskState, target: Target) -> Score:
        submission = state.output.completion if state.output else ""
        report = perception_of(str(state.sample_id), submission)
        browse = state.metadata.get("browse") or {}
        meta = {**report, "pages_visited": browse.get("pages_visited", 0),
                "steps": browse.get("steps", 0), "browse_error": browse.get("error")}
        value = report["perception"] if report["perception"] is not None else 0.0
        return Score(value=value, explanation=f"misread: {report['misread'][:10]}", metadata=meta)

    return score
