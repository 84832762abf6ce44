"""The experimental ``binding-kinds`` construction (issue 47 item 4; not the shipped set).

Its global constraints beyond the first few are all either-or, the kind the decoys
break on every instance of the shipped set, so that the binding global constraints grow
with the constraint count. What must still hold is what the default guarantees: the
target count, a reference plan the checker accepts, no family member passing the kept
draw, and a dooming first-day decision."""

from __future__ import annotations

import pytest

from environments.worldtravel.checker import check_plan
from environments.worldtravel.scenario import GLOBAL_KINDS
from environments.worldtravel.scenarios import (
    BINDING_KINDS,
    MIN_GLOBAL,
    generate_scenario,
    target_count,
    trip_days,
)
from environments.worldtravel.store import shipped_scenarios, shipped_world


def test_a_high_count_scenario_is_built_from_either_or_and_still_holds() -> None:
    world = shipped_world()
    # a 1-day trip at 29 constraints: many global constraints, a quick build
    i = next(k for k in range(40) if trip_days(k) == 1 and target_count(k) >= 28)
    sc = generate_scenario(world, 0, i, construction=BINDING_KINDS)
    shipped = shipped_scenarios()[i]
    glob = [c.kind for c in sc.constraints if c.kind in GLOBAL_KINDS]
    assert sc.n_constraints == target_count(i) and len(glob) == sc.n_global
    # the dooming precedence, one drawn kind and the total budget; the rest either-or
    assert glob.count("either_or") >= sc.n_global - MIN_GLOBAL
    assert "budget_category" not in glob
    assert glob.count("either_or") > [c.kind for c in shipped.constraints].count("either_or")
    assert check_plan(world, sc, sc.reference_plan)["feasible"]
    assert sc.meta["family_draws"][-1] == []
    assert sc.coupling["doomed"] >= 1


def test_an_unknown_construction_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown construction"):
        generate_scenario(shipped_world(), 0, 0, construction="bogus")
