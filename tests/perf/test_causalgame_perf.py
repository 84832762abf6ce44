"""CausalGame timings (pytest-benchmark): a 1,000-drone Stage-2 evaluation and a whole
scripted episode (history, 10 experiment deploys, submission) without Inspect overhead."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from benchmarks.causalgame.agents import run_experiments
from environments.causalgame import Game, load_scenario
from environments.causalgame.sim import simulate

pytestmark = pytest.mark.perf


@pytest.mark.parametrize("sid", ["antenna_trap", "deployment_zone_trap_categorical"])
def test_stage2_thousand_drones(benchmark: Any, sid: str) -> None:
    sc = load_scenario(sid)
    rng = np.random.default_rng(0)
    out = benchmark(simulate, sc, {}, 1000, rng, None, 2)
    assert out.n == 1000


def test_scripted_episode(benchmark: Any) -> None:
    def episode() -> float:
        game = Game("antenna_trap", seed=1)
        design, equipment, _ = run_experiments(game)
        game.submit(design, equipment or None)
        return float((game.final or {})["survival"])

    assert 0 <= benchmark(episode) <= 1
