"""The verdict on a study's claim, computed: the contrast with its CI, the arms' floors and
ceilings, the minimum detectable difference, and one class.

Why computed: a README that calls a row "not reproduced" while both arms sit at zero says
something the design could not have found. The study file states the paper's claim as data
(:class:`harness.factorial.study.Claim`); this section measures what the design could
detect and :func:`harness.stats.claim_verdict` decides, so the class in ``report.json`` is
a test, not a sentence. Statistics come from :mod:`harness.stats` only.
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from harness.factorial.report.options import Spec
from harness.factorial.study import Claim
from harness.stats import (
    Estimate,
    bound_reached,
    claim_verdict,
    is_binary,
    mean_ci,
    minimum_detectable_difference,
    no_worse_verdict,
    paired_difference,
    score_mean_ci,
)

__all__ = ["verdict_section"]


def _arm(rows: pl.DataFrame, spec: Spec, bounds: tuple[float, float] | None,
         binary: bool) -> Estimate:
    values = rows.get_column(spec.response).to_numpy().astype(float)
    return score_mean_ci(values, cluster=rows.get_column(spec.item).to_numpy(),
                         bounds=bounds, binary=binary)


def _blocked(at: dict[str, str | None], sign: int, baseline: Estimate,
             bounds: tuple[float, float] | None, size: float | None) -> str | None:
    """Why the arms cannot show the claimed change (None when they can): the baseline at
    the bound the claim moves towards, both arms at one bound, or less room between the
    baseline and that bound than the claimed size (a baseline at 0.97 of a [0, 1] score
    cannot be beaten by 0.27)."""
    treatment, base = at["treatment"], at["baseline"]
    stuck = "ceiling" if sign > 0 else "floor"
    if base == stuck:
        return f"the baseline is at the {stuck}"
    if treatment is not None and treatment == base:
        return f"both arms are at the {treatment}"
    if bounds is not None and size is not None:
        room = bounds[1] - baseline.estimate if sign > 0 else baseline.estimate - bounds[0]
        if room < size:
            return (f"the baseline's {baseline.estimate:.3g} leaves {room:.3g} to the "
                    f"{stuck}, less than the claimed {size:g}")
    return None


def _contrast(rows: pl.DataFrame, claim: Claim, spec: Spec, treatment: str) -> Estimate:
    """``treatment - baseline`` (over the replicate factor's levels when the claim names
    one, else paired over items)."""
    if claim.replicate is not None and claim.replicate in rows.columns:
        return _over_replicates(rows, claim, spec, treatment)
    est, _ = paired_difference(rows, by=claim.factor, value=spec.response, item=spec.item,
                               levels=(treatment, claim.baseline))
    return est


def _control_blocks(rows: pl.DataFrame, claim: Claim, spec: Spec, sign: int
                    ) -> tuple[str | None, dict[str, Any] | None]:
    """Why a no-loss claim cannot be tested because the probe shows no loss even for the
    control (None when the control is detectably worse by more than the tolerance), and
    the control's contrast for ``report.json``."""
    if claim.control is None:
        return None, None
    assert claim.tolerance is not None
    part = rows.filter(pl.col(claim.factor).is_in([claim.control, claim.baseline]))
    if part.filter(pl.col(claim.factor) == claim.control).is_empty():
        return f"the control {claim.control} has no scored rows", {"level": claim.control}
    est = _contrast(part, claim, spec, claim.control)
    loss_hi = max(sign * est.lo, sign * est.hi)  # the control's best case, claimed direction
    shown = (f"{claim.control} - {claim.baseline} {est.estimate:+.3g} "
             f"[{est.lo:+.3g}, {est.hi:+.3g}]")
    sensitive = math.isfinite(loss_hi) and loss_hi < -claim.tolerance
    out = {"level": claim.control, "contrast": _estimate(est), "sensitive": sensitive}
    if sensitive:
        return None, out
    return (f"the control ({shown}) is not detectably worse than the baseline by more "
            f"than {claim.tolerance:g}"), out


def _over_replicates(rows: pl.DataFrame, claim: Claim, spec: Spec,
                     treatment: str | None = None) -> Estimate:
    """``treatment - baseline`` with its t interval over the replicate factor's levels:
    one paired mean over items per level (a training seed), so the interval carries the
    run-to-run noise that an interval over items leaves out."""
    assert claim.replicate is not None
    treatment = treatment or claim.treatment
    means = []
    for level in rows.get_column(claim.replicate).unique().sort().to_list():
        part = rows.filter(pl.col(claim.replicate) == level)
        if part.get_column(claim.factor).n_unique() < 2:
            continue  # this replicate ran one arm only
        est, _ = paired_difference(part, by=claim.factor, value=spec.response, item=spec.item,
                                   levels=(treatment, claim.baseline))
        means.append(est.estimate)
    if not means:
        return Estimate(math.nan, math.nan, math.nan, math.nan, 0, None, 0.95)
    return mean_ci(means)


def _estimate(est: Estimate) -> dict[str, Any]:
    return {"mean": est.estimate, "ci": [est.lo, est.hi], "n": est.n}


def verdict_section(scored: pl.DataFrame, spec: Spec, claim: Claim | None,
                    default_key: str | None = None) -> dict[str, Any] | None:
    """``report.json``'s ``verdict``: None without a claim; else the class, why, the
    contrast, the arms (mean, CI, floor or ceiling), the MDE and the claim itself.

    Args:
        scored: The report's rows of the analysed score (errored policy applied; a dropped
            row has a null response and is left out here).
        spec: The analysis spec (response, item, direction).
        claim: The study's claim.
        default_key: The score a claim without ``score_key`` is about (the study's first).
    """
    if claim is None:
        return None
    key = claim.score_key or default_key
    if key is not None and spec.score_key is not None and spec.score_key != key:
        return None  # a report on another of the study's scores
    out: dict[str, Any] = {"claim": claim.model_dump()}
    rows = scored.filter(pl.col(spec.response).is_not_null()
                         & pl.col(claim.factor).is_in([claim.treatment, claim.baseline]))
    arms = {end: rows.filter(pl.col(claim.factor) == getattr(claim, end))
            for end in ("treatment", "baseline")}
    empty = [end for end, part in arms.items() if part.is_empty()]
    if empty:
        return {**out, "class": "untestable", "floor_or_ceiling": False, "mdd": None,
                "why": f"no scored rows for the {' and '.join(empty)} "
                       f"({', '.join(getattr(claim, e) for e in empty)})"}
    values = rows.get_column(spec.response).to_numpy().astype(float)
    bounds = claim.bounds or ((0.0, 1.0) if values.min() >= 0.0 and values.max() <= 1.0
                              else None)
    binary = is_binary(values)
    estimates = {end: _arm(part, spec, bounds, binary) for end, part in arms.items()}
    at = {end: bound_reached(est, bounds, claim.margin,
                             arms[end].get_column(spec.response).to_numpy().astype(float))
          for end, est in estimates.items()}
    better = claim.better or ("lower" if spec.lower_is_better else "higher")
    sign = 1 if better == "higher" else -1
    contrast = _contrast(rows, claim, spec, claim.treatment)
    sd = contrast.se * math.sqrt(contrast.n) if contrast.n >= 2 else math.nan
    mdd = (minimum_detectable_difference(contrast.n, sd)
           if contrast.n >= 2 and math.isfinite(sd) and sd > 0 else None)
    control = None
    if claim.kind == "no_worse":
        assert claim.tolerance is not None  # the claim's own validator
        both = all(v is not None for v in at.values())
        insensitive, control = _control_blocks(
            scored.filter(pl.col(spec.response).is_not_null()), claim, spec, sign)
        kind, why = no_worse_verdict(contrast, sign, claim.tolerance, mdd,
                                     "both arms are at a bound" if both else insensitive)
    else:
        blocked = _blocked(at, sign, estimates["baseline"], bounds, claim.size)
        kind, why = claim_verdict(contrast, sign, claim.size, mdd, blocked)
    return {
        **out,
        "class": kind,
        "why": why,
        "better": better,
        "floor_or_ceiling": any(v is not None for v in at.values()),
        "bounds": list(bounds) if bounds is not None else None,
        "contrast": {"estimate": contrast.estimate, "ci": [contrast.lo, contrast.hi],
                     "n_items": contrast.n,
                     "over": claim.replicate if claim.replicate in rows.columns else "items"},
        "arms": {end: {"level": getattr(claim, end), **_estimate(est), "at": at[end]}
                 for end, est in estimates.items()},
        "mdd": mdd,
        "mdd_vs_claim": None if mdd is None or claim.size is None else mdd / claim.size,
        **({"control": control} if control is not None else {}),
    }
