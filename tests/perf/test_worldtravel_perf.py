"""WorldTravel speed: checking 150 plans (target <= 1 s) and generating the set.

    .venv/bin/pytest tests/perf/test_worldtravel_perf.py -s --benchmark-enable
    WORLDTRAVEL_PERF_GENERATE=1 .venv/bin/pytest tests/perf/test_worldtravel_perf.py -s \\
        -k generation          # the whole 150-scenario set: minutes, so opt-in

No timing is asserted; the numbers are printed and recorded by pytest-benchmark.
"""

from __future__ import annotations

import os
import time
from typing import Any

import pytest

from environments.worldtravel.checker import check_plan
from environments.worldtravel.scenarios import N_SCENARIOS, generate_scenario
from environments.worldtravel.store import shipped_scenarios, shipped_world
from environments.worldtravel.world import generate_world

pytestmark = pytest.mark.perf


def _check_all() -> int:
    world = shipped_world()
    return sum(check_plan(world, s, s.reference_plan)["feasible"] for s in shipped_scenarios())


def test_checking_150_reference_plans(benchmark: Any) -> None:
    _check_all()  # warm the caches (world index, scenario load)
    start = time.perf_counter()
    _check_all()
    print(f"\nchecked {len(shipped_scenarios())} plans once: {time.perf_counter() - start:.3f} s")
    feasible = benchmark(_check_all)
    assert feasible == len(shipped_scenarios())


def test_world_generation(benchmark: Any) -> None:
    world = benchmark(generate_world, 0)
    assert len(world.cities) == 5


@pytest.mark.skipif(
    not os.environ.get("WORLDTRAVEL_PERF_GENERATE"),
    reason="generating all 150 scenarios takes minutes; set WORLDTRAVEL_PERF_GENERATE=1",
)
def test_generation_of_the_whole_set() -> None:
    world = generate_world(0)
    start = time.perf_counter()
    scenarios = [generate_scenario(world, 0, i) for i in range(N_SCENARIOS)]
    elapsed = time.perf_counter() - start
    print(f"\ngenerated {len(scenarios)} scenarios in {elapsed:.1f} s (one process)")
    assert [s.to_record() for s in scenarios] == [s.to_record() for s in shipped_scenarios()]
