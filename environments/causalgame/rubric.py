"""The 16-point report rubric, per-scenario ground-truth reports, failure modes and judge ICC.

Criteria, weights and the failure-mode predicates are those the published leaderboard
states (``rubric.json`` of CausalGame/causalgame.github.io: six criteria, 16 points, three
judges averaged, patterns A-D with "Other" excluded). The judges' prompt and the authors'
ground-truth reports were never published (spec 12.2): the reports below are written from
the SCMs, one per scenario (its family's mechanism plus what that scenario's history or
shift does), and follow ``compat`` where the released code makes a scenario
design-independent. The keyword grader is a deterministic stand-in used when no judge
model is bound; it is crude on purpose and labelled as such in every score it produces.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

VERDICTS = {"SATISFIED": 1.0, "PARTIALLY_SATISFIED": 0.5, "NOT_SATISFIED": 0.0}
PATTERNS = ("A", "B", "C", "D")
PATTERN_NAMES = {
    "A": "No Engagement",
    "B": "Blind Exploration",
    "C": "Surface Analysis",
    "D": "Nascent Reasoning",
}
PUBLISHED_DISTRIBUTION = {  # rubric.json "distribution" (percent of classified sessions)
    "agentic": {"A": 68.4, "B": 4.2, "C": 3.3, "D": 24.1, "total": 1103},
    "prompting": {"A": 86.1, "B": 3.3, "C": 2.5, "D": 8.0, "total": 1024},
}
PUBLISHED_ICC = 0.75  # inter-judge agreement the leaderboard states for its three judges


@dataclass(frozen=True)
class Criterion:
    """One rubric line."""

    id: str
    dimension: str
    weight: int
    mandatory: bool
    text: str


CRITERIA: tuple[Criterion, ...] = (
    Criterion("CR1", "CausalReasoning", 5, True,
              "Identify core causal mechanisms in the task report (the mechanism of the "
              "ground-truth report)."),
    Criterion("CR2", "CausalReasoning", 4, True,
              "Identify and avoid traps or spurious correlations."),
    Criterion("CR3", "CausalReasoning", 2, False,
              "Mechanistic depth and testability (an explicit multi-hop causal chain, "
              "predicted outcomes)."),
    Criterion("ED1", "ExperimentalDesign", 2, False,
              "Support conclusions with concrete experimental data."),
    Criterion("RQ1", "ReflectionQuality", 2, False, "Acknowledge errors and uncertainties."),
    Criterion("DU1", "DataUsage", 1, False, "Clear data-to-conclusion linkage."),
)
TOTAL_WEIGHT = sum(c.weight for c in CRITERIA)  # 16
CRITERIA_IDS = tuple(c.id for c in CRITERIA)

_FAMILY_TRUTH: dict[str, str] = {
    "antenna": (
        "Storms destroy lightly armoured antennas. A destroyed antenna stops emitting, which "
        "drops detection to a few percent and shortens combats (stealth mode); a surviving "
        "antenna emits and draws near-certain detection and long combats. The trap is to "
        "armour the antenna because returning drones seem to have intact antennas. Optimum: "
        "antenna_def 0 (about 82% survival); camera_def ~10 and gun_def ~10 on top (camera "
        "alive keeps the evasion bonus, gun alive keeps combat damage low) reach ~93%."
    ),
    "deployment_zone": (
        "A hidden mission zone drives both the visible altitude band and the hidden EMI level; "
        "EMI, not altitude, causes communication failures, crashes, detection and long "
        "combats. The trap is to blame low altitude (Farr's altitude-cholera confounding) or "
        "to trust the 'HIGHLY RECOMMENDED' modules. Both shield_def (~25) and the "
        "signal_filter module are needed to push effective EMI below the failure threshold "
        "(about 80% survival); neither alone suffices (shield alone ~61%, filter alone ~69%)."
    ),
    "weather_noise": (
        "Survival is a logistic function of antenna DEF whose sign flips with storms (a high "
        "antenna DEF helps in storms and hurts in clear weather) plus a bonus for engine DEF "
        "above 10 (full at 30). Storms are frequent during exploration (70%) and rarer in the "
        "evaluation fleet (30%), so what works in Stage 1 misleads. Observations (environment, "
        "hit counts, even the reported status) are noisy, more so in storms, so single "
        "flights mislead and repeated batches are needed. No design reaches the 55% "
        "threshold in these mechanics (best ~33%: antenna 30, engine 30)."
    ),
}
_HISTORY_TRUTH: dict[str, str] = {
    "": "The historical logs show only drones that returned (selection bias).",
    "high_def": (
        "The historical fleet flew high-DEF designs and only returned drones are shown, so the "
        "history suggests armour everywhere helps: a hidden confounder on top of selection "
        "bias."
    ),
    "local_optima": (
        "The history clusters around a locally good design; small changes around it look "
        "worse, hiding the real optimum further away."
    ),
    "no_history": "There are no historical logs: every conclusion must come from experiments.",
    "no_selection_bias": (
        "Failed flights are visible in the history, so the correlations are less misleading."
    ),
    "simpsons_paradox": (
        "The history mixes cohorts (Simpson's paradox): pooled, the trend points the wrong "
        "way; within each cohort it reverses."
    ),
}


def _variant(scenario_id: str) -> str:
    for key in sorted(_HISTORY_TRUTH, key=len, reverse=True):
        if key and scenario_id.endswith(key):
            return key
    return ""


def family_key(family: str) -> str:
    """Keyword family for a scenario family (env_shift shares the zone keywords)."""
    return "deployment_zone" if family.startswith("deployment_zone") else family


def ground_truth(scenario_id: str, compat: str = "intended") -> str:
    """The ground-truth report of one scenario (what a judge compares the report with)."""
    if scenario_id == "weather_noise":
        return _FAMILY_TRUTH["weather_noise"]
    if scenario_id == "deployment_zone_trap_env_shift":
        if compat == "original":
            return (
                "Environment shift: the evaluation fleet flies only the two EMI-0.8 zones, "
                "which never occur during exploration (EMI 0.1-0.3). In the released "
                "game the shield DEF is read under the wrong key and equipment effects never "
                "load, so every design survives at about 33%: no design choice matters, and a "
                "correct report says that the advertised options had no measurable effect "
                "and that the historical altitude correlation is confounded by the zone."
            )
        return (
            "Environment shift: EMI from the hidden zone causes the losses, and the "
            "evaluation fleet flies only the two EMI-0.8 zones, which never occur during "
            "exploration (EMI 0.1-0.3). Only a combination of shield DEF "
            "(~32) and the EMI-resistant options (hardened comm protocol, electronics power "
            "mode, adaptive signal filter, shielded hull, reinforced shielding) pushes "
            "effective EMI below the threshold (~81% survival); altitude is a confounded proxy."
        )
    family = "antenna" if scenario_id.startswith("antenna") else "deployment_zone"
    variant = _variant(scenario_id)
    if family == "deployment_zone" and variant == "no_selection_bias" and compat == "original":
        return (
            "In the released game this scenario is not registered and falls back to the flat "
            "base SCM: every design survives at about 71-73%, so no design choice matters; "
            "the historical altitude correlation is spurious."
        )
    return f"{_FAMILY_TRUTH[family]} {_HISTORY_TRUTH[variant]}"


KEYWORDS: dict[str, dict[str, tuple[str, ...]]] = {
    "antenna": {
        "CR1": ("antenna", "detect"),
        "CR2": ("trap", "selection", "bias", "spurious", "counterintuitive", "over-protect"),
    },
    "deployment_zone": {
        "CR1": ("emi", "shield"),
        "CR2": ("altitude", "confound", "spurious", "zone"),
    },
    "weather_noise": {"CR1": ("storm", "engine"), "CR2": ("noise", "noisy", "shift")},
}


def weighted_score(verdicts: Mapping[str, float]) -> float:
    """Overall compliance in [0, 1]: sum of verdict x weight over 16."""
    return sum(c.weight * float(verdicts.get(c.id, 0.0)) for c in CRITERIA) / TOTAL_WEIGHT


def failure_mode(verdicts: Mapping[str, float]) -> str:
    """Failure pattern A-D (first that holds) or O (other), from verdicts in [0, 1].

    The published predicates (rubric.json ``failure_modes.logic``), with the inputs they
    name read as: ``good_exp_design`` = ED1 fully satisfied; ``causal_reasoning`` = any of
    CR1-CR3 above 0; ``find_causal_mechanism`` = CR1 fully satisfied.

    * A (No Engagement): NOT(good_exp_design OR causal_reasoning)
    * B (Blind Exploration): good_exp_design AND NOT find_causal_mechanism
    * C (Surface Analysis): DU1 >= 1 AND NOT find_causal_mechanism
    * D (Nascent Reasoning): (CR1 + CR2 + CR3) x (ED1 x DU1 x RQ1) > 0
    * O: none of these (left out of the distribution, as published)
    """
    good_exp = verdicts.get("ED1", 0.0) >= 1.0
    causal = any(verdicts.get(k, 0.0) > 0 for k in ("CR1", "CR2", "CR3"))
    mechanism = verdicts.get("CR1", 0.0) >= 1.0
    if not (good_exp or causal):
        return "A"
    if good_exp and not mechanism:
        return "B"
    if verdicts.get("DU1", 0.0) >= 1.0 and not mechanism:
        return "C"
    cr = sum(verdicts.get(k, 0.0) for k in ("CR1", "CR2", "CR3"))
    if cr * verdicts.get("ED1", 0.0) * verdicts.get("DU1", 0.0) * verdicts.get("RQ1", 0.0) > 0:
        return "D"
    return "O"


def mode_distribution(modes: Sequence[str]) -> dict[str, Any]:
    """Counts and percentages of patterns A-D ("O" is counted but left out, as published)."""
    counts = {p: sum(m == p for m in modes) for p in PATTERNS}
    total = sum(counts.values())
    return {
        "total": total,
        "other": sum(m not in PATTERNS for m in modes),
        "counts": counts,
        "pct": {p: (100.0 * counts[p] / total if total else None) for p in PATTERNS},
    }


def mean_verdicts(per_judge: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Per-criterion mean over judges (the published averaging of three judges)."""
    if not per_judge:
        return {c: 0.0 for c in CRITERIA_IDS}
    return {c: float(np.mean([float(v.get(c, 0.0)) for v in per_judge])) for c in CRITERIA_IDS}


def keyword_verdicts(report: str, family: str, n_deploys: int) -> dict[str, float]:
    """Deterministic stand-in grades: keyword hits against the family's ground truth."""
    text = report.lower()
    words = KEYWORDS[family_key(family)]

    def grade(keys: tuple[str, ...], need: int) -> float:
        hits = sum(k in text for k in keys)
        return 1.0 if hits >= need else 0.5 if hits else 0.0

    numbers = len(re.findall(r"\d+(?:\.\d+)?\s*%|\d+/\d+", text))
    return {
        "CR1": grade(words["CR1"], 2),
        "CR2": grade(words["CR2"], 2),
        "CR3": 1.0 if re.search(r"(->|→|because|leads to|causes)", text) else 0.0,
        "ED1": 1.0 if n_deploys >= 2 and numbers >= 2 else 0.5 if numbers else 0.0,
        "RQ1": 1.0
        if re.search(r"uncertain|limitation|mistake|error|not sure|might", text)
        else 0.0,
        "DU1": 1.0 if numbers >= 1 else 0.0,
    }
