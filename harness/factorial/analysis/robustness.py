"""Model-level questions: ranking robustness across setups, gap attribution, items needed.

Why apart from the ANOVA: these read cell means of the model factor, not the fitted model.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl
from scipy import stats as sps

from harness.factorial.analysis.prepare import Prepared
from harness.stats import items_needed, kendall_tau, kendall_w


def setup_matrix(prep: Prepared, m: int, s: int) -> tuple[list[str], list[str], np.ndarray]:
    """Model x setup-level mean scores, averaging cell means over the other factors."""
    tab = prep.cells.group_by([f"_f{m}", f"_f{s}"]).agg(pl.col("mean").mean())
    models, setups = prep.levels[m], prep.levels[s]
    M = np.full((len(models), len(setups)), np.nan)
    for mv, sv, val in tab.rows():
        M[models.index(mv), setups.index(sv)] = val
    return models, setups, M


def robustness(prep: Prepared, m: int) -> dict[str, Any]:
    out: dict[str, Any] = {"model_factor": prep.names[m], "setup_factors": {}}
    for s in range(len(prep.names)):
        if s == m or len(prep.levels[s]) < 2:
            continue
        models, setups, M = setup_matrix(prep, m, s)
        per_model = {}
        for i, mv in enumerate(models):
            row = M[i][np.isfinite(M[i])]
            if row.size == 0:
                continue
            maxp, avgp = float(row.max()), float(row.mean())
            per_model[mv] = {
                "spread": maxp - float(row.min()),
                "max": maxp,
                "avg": avgp,
                "cps": (1 - (maxp - avgp)) * maxp,
            }
        complete = M[:, np.all(np.isfinite(M), axis=0)]
        entry: dict[str, Any] = {
            "per_model": per_model,
            "kendall_w": None,
            "kendall_tau": [],
            "rank_flips": [],
        }
        if len(models) >= 2 and complete.shape[1] >= 2:
            ranks = np.apply_along_axis(sps.rankdata, 0, -complete)
            entry["kendall_w"] = float(kendall_w(ranks.T))
        kept = [sv for j, sv in enumerate(setups) if np.all(np.isfinite(M[:, j]))]
        for (ja, a), (jb, b) in itertools.combinations(enumerate(setups), 2):
            if a in kept and b in kept and len(models) >= 2:
                entry["kendall_tau"].append(
                    {"a": a, "b": b, "tau": float(kendall_tau(M[:, ja], M[:, jb]))}
                )
        for (ia, ma), (ib, mb) in itertools.combinations(enumerate(models), 2):
            diff = M[ia] - M[ib]
            first = [setups[j] for j in range(len(setups)) if diff[j] > 0]
            second = [setups[j] for j in range(len(setups)) if diff[j] < 0]
            if first and second:
                entry["rank_flips"].append(
                    {"models": [ma, mb], "first_ahead_at": first, "second_ahead_at": second}
                )
        entry["n_rank_flips"] = len(entry["rank_flips"])
        out["setup_factors"][prep.names[s]] = entry
    return out


def pick_pair(prep: Prepared, m: int, compare: Sequence[str] | None) -> tuple[str, str]:
    means = prep.cells.group_by(f"_f{m}").agg(pl.col("mean").mean()).sort("mean", descending=True)
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
    return {
        **out,
        "observed_diff": observed,
        "sd_diff": sd,
        "n_items": wide.height,
        "target_diff": target,
        "items_needed": needed,
    }


