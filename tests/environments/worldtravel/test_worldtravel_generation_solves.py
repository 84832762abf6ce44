"""The generator's deterministic speed measure: CP-SAT solves per scenario.

Why: wall and CPU seconds depend on the machine and its load; the number of solves does
not (every solve stops at a deterministic work limit), so it is the figure a speed-up of
the generator is judged by. These tests check that the count is real (it moves with
the work done), the same in a worker process as in this one, and printed by the CLI.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from environments.worldtravel import generate as generate_cli
from environments.worldtravel.planners import _memo
from environments.worldtravel.solver import solve, solvers_made
from environments.worldtravel.store import shipped_scenarios, shipped_world


def test_every_solve_is_counted() -> None:
    world, sc = shipped_world(), shipped_scenarios()[0]
    before = solvers_made()
    result = solve(world, sc, limit=0.05)
    # one solve for the plan, one to compact its times
    assert result.feasible and solvers_made() - before == 2


def test_one_scenario_takes_the_same_solves_in_a_worker_and_in_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    index = next(i for i, s in enumerate(shipped_scenarios()) if s.days == 1)
    here: list[int] = []
    there: list[int] = []
    # the family's memo reuses solves of a scenario made before (forked workers inherit
    # it): each count starts without it, as in a fresh process
    _memo.clear()
    generate_cli.build(0, [index], jobs=1, solves=here)
    _memo.clear()
    generate_cli.build(0, [index], jobs=2, solves=there)
    _memo.clear()
    assert here == there and here[0] > 3  # witness, decoys, reference, family, coupling
    assert generate_cli.main(["--seed", "0", "--out", str(tmp_path), "--indices", str(index)]) == 0
    line = capsys.readouterr().err.strip().splitlines()[-1]
    found = re.search(r"(\d+) CP-SAT solves", line)
    assert found is not None and int(found.group(1)) == here[0]
