"""``stats --json`` → ``decoy_globals``: how many global constraints the decoys break.

Known answers on the shipped scenarios' own counts and lengths, with the generator's
``meta.decoys_fail`` replaced by patterns whose summary is known."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from environments.worldtravel.analysis import bucket
from environments.worldtravel.scenario import GLOBAL_KINDS, Scenario
from environments.worldtravel.stats import decoy_globals
from environments.worldtravel.store import shipped_scenarios


def _with_fails(sc: Scenario, per_decoy: list[list[str]]) -> Scenario:
    meta: dict[str, Any] = {**sc.meta, "decoys_fail": {
        f"decoy{k}": kinds for k, kinds in enumerate(per_decoy)}}
    return replace(sc, meta=meta)


def _globals(sc: Scenario) -> list[str]:
    return [c.kind for c in sc.constraints if c.kind in GLOBAL_KINDS]


def test_every_global_broken_gives_share_one_and_local_failures_do_not_count() -> None:
    scs = [_with_fails(s, [_globals(s) + ["meal_window", "exclude"], _globals(s)])
           for s in shipped_scenarios()[:40]]
    out = decoy_globals(scs)
    rows = list(out["by_bucket"].values()) + list(out["by_days"].values())
    assert all(r["share_broken"] == 1.0 and r["broken"] == r["global"] for r in rows)
    assert sum(r["n"] for r in out["by_bucket"].values()) == 40
    assert sum(r["n"] for r in out["by_days"].values()) == 40
    assert out["by_kind"] and set(out["by_kind"].values()) == {1.0}


def test_a_fixed_number_broken_falls_as_a_share_where_the_count_adds_globals() -> None:
    # each decoy breaks exactly two global constraints, whatever the count: ``broken``
    # stays at 2 and the share is 2 / n_global, bucket by bucket
    scs = [_with_fails(s, [_globals(s)[:2]] * 3) for s in shipped_scenarios()]
    out = decoy_globals(scs)
    for name, row in out["by_bucket"].items():
        mine = [s for s in scs if bucket(s.n_constraints) == name]
        assert row["broken"] == 2.0 and row["n"] == len(mine)
        assert abs(row["share_broken"] - sum(2 / s.n_global for s in mine) / len(mine)) < 1e-3
    shares = [r["share_broken"] for r in out["by_bucket"].values()]
    assert shares[0] > shares[-1]  # more globals at higher counts
    assert decoy_globals([_with_fails(scs[0], [])]) == {
        "by_bucket": {}, "by_days": {}, "by_kind": {}}


def test_by_kind_counts_each_decoy_against_each_instance() -> None:
    sc = next(s for s in shipped_scenarios() if _globals(s).count("either_or") >= 2)
    # two decoys: one breaks one either-or instance, the other breaks none
    out = decoy_globals([_with_fails(sc, [["either_or"], []])])
    n = _globals(sc).count("either_or")
    assert out["by_kind"]["either_or"] == round(1 / (2 * n), 3)
    assert all(v == 0.0 for k, v in out["by_kind"].items() if k != "either_or")
