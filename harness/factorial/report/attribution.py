"""The report's one-sentence attribution of the headline gap, and the numbers behind it.

Why a module: it combines the analysis' ANOVA and attribution with the raw cell means.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.factorial.report.options import Spec


def anova_rows(analysis: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    rows = (analysis or {}).get("anova") or []
    return [r for r in rows if isinstance(r, Mapping) and "term" in r]


def term_factors(term: str) -> set[str]:
    return set(str(term).split(":"))


def headline_factor(factors: list[str], chosen: str | None = None) -> str:
    """The factor a report's headline is about: ``chosen`` (a study's ``headline_factor``)
    when given, else ``model`` when it is a factor, else the first factor."""
    if chosen is not None:
        return chosen
    return "model" if "model" in factors else factors[0]


def attribution_section(
    analysis: Mapping[str, Any] | None, cells: list[dict[str, Any]], spec: Spec
) -> dict[str, Any]:
    """A one-sentence attribution plus the numbers behind it.

    The headline factor is the spec's ``headline_factor`` when set, else ``model`` when it
    is a factor (else the first factor); the
    headline pair is the analysis' attributed pair (its top two models) or, without one or
    when the score is lower-is-better (``spec.lower_is_better``), the best and worst levels
    by raw means in the score's direction. The sentence gives the gap, how it behaves
    across every setup condition (combination of the other factors' levels), and how much
    of the explained variance is the factor's main effect vs its interactions.
    """
    factor = headline_factor(spec.factors, spec.headline_factor)
    setup = [f for f in spec.factors if f != factor]
    provided = (analysis or {}).get("attribution") or None

    ss = {str(r["term"]): r.get("sum_sq") for r in anova_rows(analysis)}
    explained = {t: float(v) for t, v in ss.items()
                 if isinstance(v, int | float) and t not in ("Residual", "item")}
    total = sum(explained.values())
    main_share = explained.get(factor, 0.0) / total if total > 0 else None
    inter = sum(v for t, v in explained.items() if factor in term_factors(t) and ":" in t)
    inter_share = inter / total if total > 0 else None

    by_level: dict[str, list[float]] = {}
    setups: dict[tuple[str, ...], dict[str, float]] = {}
    for cell in cells:
        if cell["mean"] is not None:
            level = cell["levels"][factor]
            by_level.setdefault(level, []).append(cell["mean"])
            key = tuple(cell["levels"][f] for f in setup)
            setups.setdefault(key, {})[level] = cell["mean"]
    averages = {lv: sum(v) / len(v) for lv, v in by_level.items()}
    # the analysis picks its pair as the two highest means: right only when higher is better
    pair = (provided.get("models") if isinstance(provided, Mapping)
            and not spec.lower_is_better else None)
    if not (isinstance(pair, list) and len(pair) == 2 and all(p in averages for p in pair)):
        sign = 1.0 if spec.lower_is_better else -1.0
        ranked = sorted(averages, key=lambda lv: sign * averages[lv])
        pair = [ranked[0], ranked[-1]] if len(ranked) >= 2 else None

    headline: dict[str, Any] | None = None
    parts: list[str] = []
    if pair is not None:
        first, second = (str(p) for p in pair)
        diffs = [m[first] - m[second] for m in setups.values() if first in m and second in m]
        gap = averages[first] - averages[second]
        same = sum(1 for d in diffs if (d > 0) == (gap > 0) and d != 0)
        headline = {
            "best": first, "worst": second, "difference": gap,
            "setup_conditions": len(diffs),
            "min_difference": min(diffs) if diffs else None,
            "max_difference": max(diffs) if diffs else None,
            "conditions_same_sign": same,
        }
        direction = " (lower is better)" if spec.lower_is_better else ""
        text = (f"The gap in {spec.score_key or spec.response}{direction} between {factor} "
                f"{first} and {second} is {gap:+.3f}")
        if diffs and setup:
            text += (f"; over the {len(diffs)} setup conditions ({' x '.join(setup)}) it "
                     f"ranges from {min(diffs):+.3f} to {max(diffs):+.3f} and keeps its sign "
                     f"in {same} of {len(diffs)}")
        parts.append(text)
    if main_share is not None and inter_share is not None:
        parts.append(
            f"{factor}'s main effect accounts for {100 * main_share:.1f}% of the explained "
            f"variance and its interactions with the setup factors for "
            f"{100 * inter_share:.1f}%"
        )
    statement = ". ".join(parts) + "." if parts else "No attribution: fewer than two levels."
    return {
        "factor": factor,
        "setup_factors": setup,
        "statement": statement,
        "main_effect_share": main_share,
        "interaction_share": inter_share,
        "headline": headline,
        "analysis_attribution": provided,
    }

