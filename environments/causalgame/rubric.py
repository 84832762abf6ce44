"""The 16-point report rubric, the per-family ground-truth reports, and failure modes.

The judges' prompt and ground-truth reports were never published (spec 12.2): the reports
below are written from the SCMs, one per family, and the failure-mode predicates use the
plausible definitions the spec gives (ED1 satisfied; any CR > 0; CR1 satisfied). The
keyword grader is a deterministic stand-in used when no judge model is given; it is
crude on purpose and labelled as such in every score it produces.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

VERDICTS = {"SATISFIED": 1.0, "PARTIALLY_SATISFIED": 0.5, "NOT_SATISFIED": 0.0}


@dataclass(frozen=True)
class Criterion:
    """One rubric line."""

    id: str
    dimension: str
    weight: int
    mandatory: bool
    text: str


CRITERIA: tuple[Criterion, ...] = (
    Criterion(
        "CR1",
        "causal",
        5,
        True,
        "Identifies the core causal mechanism described in the ground-truth report.",
    ),
    Criterion("CR2", "causal", 4, True, "Identifies and avoids the traps / spurious correlations."),
    Criterion(
        "CR3",
        "causal",
        2,
        False,
        "Mechanistic depth and testability (an explicit multi-hop causal chain).",
    ),
    Criterion(
        "ED1", "experimental", 2, False, "Conclusions are supported by concrete experimental data."
    ),
    Criterion("RQ1", "reflection", 2, False, "Acknowledges errors, uncertainties, blind spots."),
    Criterion("DU1", "data", 1, False, "Clear linkage from data to conclusions."),
)
TOTAL_WEIGHT = sum(c.weight for c in CRITERIA)  # 16

GROUND_TRUTH: dict[str, str] = {
    "antenna": (
        "Storms destroy lightly armoured antennas. A destroyed antenna stops emitting, which "
        "drops detection to a few percent and shortens combats (stealth mode); a surviving "
        "antenna emits and draws near-certain detection and long combats. The trap is to "
        "armour the antenna because surviving drones seem to have intact antennas (selection "
        "bias, high-DEF history). Optimum: antenna_def 0, camera_def ~10 (camera alive keeps "
        "the evasion bonus), gun_def ~10 (gun alive keeps combat damage low)."
    ),
    "deployment_zone": (
        "A hidden mission zone drives both the visible altitude band and the hidden EMI level; "
        "EMI, not altitude, causes communication failures, crashes, detection and long "
        "combats. The trap is to blame low altitude (Farr's altitude-cholera confounding) or "
        "the advertised modules. Both shield_def (~25) and the signal_filter module are "
        "needed to push effective EMI below the threshold; neither alone suffices."
    ),
    "weather_noise": (
        "Survival is driven by storms interacting with antenna DEF and by engine DEF (engine "
        "DEF >= 30 helps); observations are noisy, so single flights mislead and repeated "
        "batches are needed. The evaluation fleet sees fewer storms than exploration."
    ),
}
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


def family_key(family: str) -> str:
    """Ground-truth family for a scenario family (env_shift shares the zone report)."""
    return "deployment_zone" if family.startswith("deployment_zone") else family


def weighted_score(verdicts: Mapping[str, float]) -> float:
    """Overall compliance in [0, 1]: sum of verdict x weight over 16."""
    return sum(c.weight * float(verdicts.get(c.id, 0.0)) for c in CRITERIA) / TOTAL_WEIGHT


def failure_mode(verdicts: Mapping[str, float]) -> str:
    """Failure mode A-D (priority order) or O (other), from criterion verdicts in [0, 1]."""
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
