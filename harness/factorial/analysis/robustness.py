"""Model-level questions: ranking robustness across setups, gap attribution, items needed.

Why apart from the ANOVA: these read cell means of the model factor, not the fitted model.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl
from scipy import stats as sps

from harness.factorial.analysis.prepare import Prepared
from harness.stats import (
    item_bootstrap,
    items_needed,
    kendall_tau,
    kendall_w,
    minimum_detectable_difference,
    paired_difference_ci,
)


def setup_matrix(prep: Prepared, m: int, s: int) -> tuple[list[str], list[str], np.ndarray]:
    """Model x setup-level mean scores, averaging cell means over the other factors."""
    tab = prep.cells.group_by([f"_f{m}", f"_f{s}"]).agg(pl.col("mean").mean())
    models, setups = prep.levels[m], prep.levels[s]
    M = np.full((len(models), len(setups)), np.nan)
    for mv, sv, val in tab.rows():
        M[models.index(mv), setups.index(sv)] = val
    return models, setups, M


def item_setup_array(prep: Prepared, m: int, s: int) -> np.ndarray | None:
    """(items, models, setup levels) per-item means, each the equal-weight average of the
    item's cell means over the other factors (NaN where the item has no such cell); the
    column means over items are :func:`setup_matrix` in a balanced design."""
    if prep.groups is None:
        return None
    cells = prep.cells.select("_cell", f"_f{m}", f"_f{s}")
    tab = (
        prep.groups.join(cells, on="_cell")
        .group_by(["_item_idx", f"_f{m}", f"_f{s}"])
        .agg(pl.col("mean").mean())
    )
    models, setups = prep.levels[m], prep.levels[s]
    out = np.full((len(prep.items), len(models), len(setups)), np.nan)
    mi = {v: i for i, v in enumerate(models)}
    si = {v: i for i, v in enumerate(setups)}
    for item, mv, sv, val in tab.rows():
        out[item, mi[mv], si[sv]] = val
    return out


RANK_DECIMALS = 10
"""Decimals kept before ranking cell means (far above any score's resolution)."""


def _stats_of(M: np.ndarray, pairs: list[tuple[int, int]], complete: np.ndarray) -> np.ndarray:
    """Per resample (B, models, setups): spread and CPS per model, Kendall W, tau per pair."""
    with np.errstate(invalid="ignore"):
        mx = np.nanmax(M, axis=2)
        mn = np.nanmin(M, axis=2)
        avg = np.nanmean(M, axis=2)
    spread = mx - mn
    cps = (1 - (mx - avg)) * mx
    k = M.shape[1]
    # ranks compare means that are equal in exact arithmetic but not always in the last
    # bits (a sum taken in another order on another CPU): rounded first, a tie is a tie on
    # every machine and the rank statistics do not move with the BLAS build
    M = np.round(M, RANK_DECIMALS)
    extra = np.full((M.shape[0], 1 + len(pairs)), np.nan)
    if k >= 2 and complete.sum() >= 2:
        for b in range(M.shape[0]):
            sub = M[b][:, complete]
            if np.isnan(sub).any():
                continue
            extra[b, 0] = kendall_w(sps.rankdata(-sub, axis=0).T)
            for j, (ja, jb) in enumerate(pairs):
                extra[b, 1 + j] = kendall_tau(M[b, :, ja], M[b, :, jb])
    return np.hstack([spread, cps, extra])


def robustness(
    prep: Prepared, m: int, level: float = 0.95, n_boot: int = 1000, seed: int = 0
) -> dict[str, Any]:
    """Spread, CPS, Kendall W and tau of the model ranking across each setup factor, with
    paired-over-items bootstrap CIs, and rank flips with and without a significance filter.

    A rank flip (model a ahead at one setup level, b ahead at another) counts as
    *distinguishable* only when both differences have paired-by-item t intervals at
    ``level`` that exclude zero; ``rank_flips`` lists every flip of the point estimates,
    each marked ``distinguishable``. Spread (max - min of noisy means) is biased upward,
    so its bootstrap CI and the bootstrap bias-corrected value (2 x observed - bootstrap
    mean) are given alongside it.
    """
    out: dict[str, Any] = {"model_factor": prep.names[m], "setup_factors": {},
                           "level": level, "n_boot": n_boot,
                           "bootstrap": "paired over items" if prep.groups is not None
                           else None}
    for s in range(len(prep.names)):
        if s == m or len(prep.levels[s]) < 2:
            continue
        models, setups, M = setup_matrix(prep, m, s)
        complete = np.all(np.isfinite(M), axis=0)
        kept = [j for j in range(len(setups)) if complete[j]]
        pairs = list(itertools.combinations(kept, 2))
        items = item_setup_array(prep, m, s)
        observed = _stats_of(M[None], pairs, complete)[0]
        lo = hi = boot_mean = np.full_like(observed, np.nan)
        if items is not None and items.shape[0] >= 2:
            boot = item_bootstrap(
                items, functools.partial(_stats_of, pairs=pairs, complete=complete),
                n_boot=n_boot, level=level, seed=seed,
            )
            lo, hi, boot_mean = boot.lo, boot.hi, boot.mean
        k = len(models)

        def ci(j: int, lo: np.ndarray = lo, hi: np.ndarray = hi) -> list[float | None]:
            return [_num(lo[j]), _num(hi[j])]

        per_model = {}
        for i, mv in enumerate(models):
            if not np.isfinite(M[i]).any():
                continue
            row = M[i][np.isfinite(M[i])]
            per_model[mv] = {
                "spread": float(observed[i]),
                "spread_ci": ci(i),
                "spread_bias_corrected": _num(max(2 * observed[i] - boot_mean[i], 0.0))
                if np.isfinite(boot_mean[i]) else None,
                "max": float(row.max()),
                "avg": float(row.mean()),
                "cps": float(observed[k + i]),
                "cps_ci": ci(k + i),
            }
        entry: dict[str, Any] = {
            "per_model": per_model,
            "kendall_w": _num(observed[2 * k]),
            "kendall_w_ci": ci(2 * k),
            "kendall_tau": [
                {"a": setups[ja], "b": setups[jb], "tau": _num(observed[2 * k + 1 + j]),
                 "tau_ci": ci(2 * k + 1 + j)}
                for j, (ja, jb) in enumerate(pairs)
            ],
            "rank_flips": [],
        }
        for (ia, ma), (ib, mb) in itertools.combinations(enumerate(models), 2):
            diff = M[ia] - M[ib]
            first = [setups[j] for j in range(len(setups)) if diff[j] > 0]
            second = [setups[j] for j in range(len(setups)) if diff[j] < 0]
            if not (first and second):
                continue
            sig = _significant_sides(items, ia, ib, level) if items is not None else None
            entry["rank_flips"].append({
                "models": [ma, mb], "first_ahead_at": first, "second_ahead_at": second,
                "distinguishable": bool(sig and sig[0] and sig[1]),
                "first_ahead_significantly_at": [setups[j] for j in sig[0]] if sig else None,
                "second_ahead_significantly_at": [setups[j] for j in sig[1]] if sig else None,
            })
        entry["n_rank_flips"] = len(entry["rank_flips"])
        entry["n_rank_flips_distinguishable"] = (
            sum(f["distinguishable"] for f in entry["rank_flips"]) if items is not None
            else None
        )
        out["setup_factors"][prep.names[s]] = entry
    return out


def _num(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def _significant_sides(
    items: np.ndarray, ia: int, ib: int, level: float
) -> tuple[list[int], list[int]]:
    """Setup levels where a - b (paired by item) is distinguishably > 0, and < 0."""
    ahead, behind = [], []
    for j in range(items.shape[2]):
        a, b = items[:, ia, j], items[:, ib, j]
        ok = np.isfinite(a) & np.isfinite(b)
        if ok.sum() < 2:
            continue
        est = paired_difference_ci(a[ok], b[ok], level=level)
        if not np.isfinite(est.lo):
            continue
        if est.lo > 0:
            ahead.append(j)
        elif est.hi < 0:
            behind.append(j)
    return ahead, behind


def pick_pair(prep: Prepared, m: int, compare: Sequence[str] | None) -> tuple[str, str]:
    # ties (two levels with the same mean) break by level name: group_by's order is
    # arbitrary, and the attributed pair must not change from one run to the next
    means = (prep.cells.group_by(f"_f{m}").agg(pl.col("mean").mean())
             .sort(["mean", f"_f{m}"], descending=[True, False]))
    if compare is not None:
        a, b = (str(c) for c in compare)
        for v in (a, b):
            if v not in prep.levels[m]:
                raise ValueError(f"{v!r} is not a level of {prep.names[m]!r}")
        return a, b
    top = means.get_column(f"_f{m}").to_list()
    if len(top) < 2:
        raise ValueError("attribution needs two models")
    return top[0], top[1]


def attribution(
    prep: Prepared, m: int, pair: tuple[str, str], anova: pl.DataFrame
) -> dict[str, Any]:
    a, b = pair
    overall = prep.cells.group_by(f"_f{m}").agg(pl.col("mean").mean())
    lookup = dict(overall.rows())
    gap = float(lookup[a] - lookup[b])
    out: dict[str, Any] = {"models": [a, b], "gap": gap, "setup_factors": {}}
    ss = dict(zip(anova.get_column("term"), anova.get_column("sum_sq"), strict=True))
    model_name = prep.names[m]
    for s in range(len(prep.names)):
        if s == m or len(prep.levels[s]) < 2:
            continue
        models, setups, M = setup_matrix(prep, m, s)
        gaps = M[models.index(a)] - M[models.index(b)]
        ok = np.isfinite(gaps)
        g = gaps[ok]
        if g.size == 0:
            continue
        mean = float(g.mean())
        main_part = g.size * mean**2
        inter_part = float(np.sum((g - mean) ** 2))
        inter_term = ":".join(sorted([model_name, prep.names[s]], key=prep.names.index))
        ss_m, ss_i = ss.get(model_name), ss.get(inter_term)
        table_share = (
            ss_i / (ss_m + ss_i)
            if ss_m is not None and ss_i is not None and (ss_m + ss_i) > 0
            else None
        )
        same = int(np.sum(np.sign(g) == np.sign(gap))) if gap != 0 else 0
        pct = 100 * inter_part / max(main_part + inter_part, 1e-300)
        out["setup_factors"][prep.names[s]] = {
            "gap_by_level": {
                sv: float(x) for sv, x in zip(setups, gaps, strict=True) if np.isfinite(x)
            },
            "mean": mean,
            "min": float(g.min()),
            "max": float(g.max()),
            "levels_same_sign": same,
            "n_levels": int(g.size),
            "interaction_share": inter_part / (main_part + inter_part)
            if main_part + inter_part > 0
            else None,
            "interaction_ss_share": table_share,
            "statement": (
                f"{a} - {b} = {gap:.4g} overall; across {prep.names[s]} the gap ranges "
                f"{float(g.min()):.4g} to {float(g.max()):.4g} and keeps its sign at {same} of "
                f"{g.size} levels; {pct:.0f}% of its squared variation is model x setup "
                "interaction"
            ),
        }
    return out


def power_analysis(
    prep: Prepared, m: int, pair: tuple[str, str], diff: float | None, alpha: float, power: float
) -> dict[str, Any]:
    a, b = pair
    out: dict[str, Any] = {"models": [a, b], "alpha": alpha, "power": power}
    if "_item" not in prep.work.columns:
        return {**out, "items_needed": None, "note": "needs an item column to pair"}
    wide = (
        prep.work.filter(pl.col(f"_f{m}").is_in([a, b]))
        .group_by(["_item", f"_f{m}"])
        .agg(pl.col("_y").mean())
        .pivot(on=f"_f{m}", index="_item", values="_y")
        .drop_nulls()
    )
    if wide.height < 2 or a not in wide.columns or b not in wide.columns:
        return {**out, "items_needed": None, "note": "fewer than two items with both models"}
    d = wide.get_column(a).to_numpy() - wide.get_column(b).to_numpy()
    sd = float(np.std(d, ddof=1))
    observed = float(d.mean())
    target = abs(diff if diff is not None else observed)
    needed = items_needed(target, sd, alpha=alpha, power=power) if target > 0 and sd > 0 else None
    mdd = minimum_detectable_difference(wide.height, sd, alpha=alpha, power=power) if sd > 0 \
        else None
    return {
        **out,
        "observed_diff": observed,
        "sd_diff": sd,
        "n_items": wide.height,
        "target_diff": target,
        "items_needed": needed,
        "mdd": mdd,
        "mdd_note": f"smallest paired difference {wide.height} items detect with power "
                    f"{power} at alpha {alpha} (paired t, sd of per-item differences from "
                    "these data)",
    }


