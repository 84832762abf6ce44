"""The experimental ``binding-obligations`` construction (issue 47 item 4; not the
shipped set): its either-or constraints are *anchored* on a sight the witness visits and
every decoy skips, so each one the count adds binds every planner that skips the anchor,
on a trip of any length."""

from __future__ import annotations

from typing import Any

import numpy as np

from environments.worldtravel.checker import check_plan
from environments.worldtravel.scenario import GLOBAL_KINDS, Constraint
from environments.worldtravel.scenarios import (
    BINDING_OBLIGATIONS,
    CONSTRUCTIONS,
    _anchored_either_or,
    generate_scenario,
    target_count,
    trip_days,
)
from environments.worldtravel.store import shipped_scenarios, shipped_world


def _plan(*sights: str) -> dict[str, Any]:
    stops = [{"kind": "attraction", "id": x} for x in sights]
    return {"lodging": [], "days": [{"day": 1, "stops": stops}]}


def test_the_anchor_is_a_witness_sight_every_decoy_skips_and_is_reused() -> None:
    world, sc = shipped_world(), shipped_scenarios()[0]
    ids = [a.id for a in world.attractions if a.city in sc.cities]
    witness = _plan(ids[0], ids[1])
    decoys = {"d1": _plan(ids[0], ids[2]), "d2": _plan(ids[3])}
    rng = np.random.default_rng(0)
    have: list[Constraint] = []
    for _ in range(4):
        p = _anchored_either_or(world, sc, witness, decoys, rng, have)
        assert p is not None and p["a"] == ids[1]  # the only sight no decoy visits
        assert p["b"] not in {ids[0], ids[1], ids[2], ids[3]}
        assert p["b"] not in {c.params["b"] for c in have}  # a new b each time
        have.append(Constraint("", "either_or", p, ""))
    # every witness sight tempting: no anchor
    assert _anchored_either_or(world, sc, witness, {"d": _plan(ids[0], ids[1])}, rng, []) is None


def test_a_high_count_scenario_is_built_and_still_holds() -> None:
    assert BINDING_OBLIGATIONS in CONSTRUCTIONS
    world = shipped_world()
    i = next(k for k in range(40) if trip_days(k) == 1 and target_count(k) >= 28)
    sc = generate_scenario(world, 0, i, construction=BINDING_OBLIGATIONS)
    glob = [c for c in sc.constraints if c.kind in GLOBAL_KINDS]
    assert sc.n_constraints == target_count(i) and len(glob) == sc.n_global
    anchors = {c.params["a"] for c in glob if c.kind == "either_or"}
    assert sc.reference_plan is not None
    sights = {s["id"] for d in sc.reference_plan["days"] for s in d["stops"]}
    assert len([c for c in glob if c.kind == "either_or"]) >= sc.n_global - 3
    assert anchors & sights  # the reference plan visits an anchor, as the witness did
    assert check_plan(world, sc, sc.reference_plan)["feasible"]
    assert sc.meta["family_draws"][-1] == []
    # each decoy breaks every anchored either-or it was built against
    fails = sc.meta["decoys_fail"]
    assert all(kinds.count("either_or") >= 1 for kinds in fails.values())
