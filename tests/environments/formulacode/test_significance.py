"""Per-workload significance, the noise floor and CIs on a task's advantage (item 4)."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from environments.formulacode import metrics as m

WLS = [f"bench.S.time_{k}({n})" for k in "abc" for n in (1, 2)]


def _tree(times: dict[str, float], rounds: int, noise: float, rng: random.Random,
          per_round: int = 3) -> dict[str, Any]:
    samples: dict[str, list[float]] = {}
    medians: dict[str, list[float]] = {}
    for wl, t in times.items():
        for _ in range(rounds):
            level = t * math.exp(rng.gauss(0, noise))  # round-to-round drift
            vals = [level * math.exp(rng.gauss(0, noise / 3)) for _ in range(per_round)]
            samples.setdefault(wl, []).extend(vals)
            medians.setdefault(wl, []).append(sorted(vals)[per_round // 2])
    return {"apply": {"ok": True}, "samples": samples, "round_medians": medians,
            "tests": {"failed": 0, "error": 0}, "snapshot": {"status": "passed"}}


def _result(candidates: dict[str, float | dict[str, float]], rounds: int = 8,
            noise: float = 0.01, expert: float = 2.0, seed: int = 1,
            control: bool = True) -> dict[str, Any]:
    rng = random.Random(seed)
    base = {wl: 0.01 * (i + 1) for i, wl in enumerate(WLS)}

    def scaled(speed: float | dict[str, float]) -> dict[str, float]:
        return {wl: t / (speed if isinstance(speed, float) else speed[wl])
                for wl, t in base.items()}

    trees = {"baseline": _tree(base, rounds, noise, rng),
             "expert": _tree(scaled(expert), rounds, noise, rng)}
    for name, speed in candidates.items():
        trees[name] = _tree(scaled(speed), rounds, noise, rng)
    if control:
        trees["control"] = _tree(base, rounds, noise, rng)
    return {"workloads": WLS, "trees": trees, "controls": ["control"] if control else []}


def test_paired_tests_on_log_ratios() -> None:
    shift = [0.10 + 0.002 * (-1) ** i for i in range(6)]
    assert m.paired_t_p(shift) < 1e-6
    assert m.paired_t_p([0.01, -0.012, 0.008, -0.009, 0.011, -0.01]) > 0.5
    assert m.paired_t_p([0.3]) == 1.0  # one round proves nothing
    assert m.signflip_p([0.1] * 5) == pytest.approx(2 / 32)  # 5 rounds can never reach 0.05
    assert m.signflip_p([0.1] * 6) == pytest.approx(2 / 64)
    assert m.mannwhitney_p([1.0, 1.1, 1.2, 1.05, 1.15], [2.0, 2.1, 2.2, 2.05, 2.15]) < 0.05
    assert m.mannwhitney_p([1.0, 1.0], [1.0, 1.0]) == 1.0


def test_noise_floor_is_calibrated_from_base_copies() -> None:
    result = _result({}, noise=0.03)
    floor, source = m.noise_floor(result)
    assert source == "control" and 0 < floor < 0.2
    quiet, _ = m.noise_floor(_result({}, noise=0.002))
    assert quiet < floor  # a quieter machine gets a lower floor
    assert m.noise_floor(_result({}, control=False)) == (m.DEFAULT_NOISE_FLOOR, "default")


def test_a_speedup_inside_the_noise_floor_counts_as_none() -> None:
    tiny = _result({"agent": 1.004}, noise=0.004)  # significant maybe, but below the floor
    ev = m.evaluate(tiny, "agent", floor=math.log(1.02))
    assert ev["significant_workloads"] == 0
    assert ev["advantage_overall"] == pytest.approx(1.0 - ev["expert_speedup"], rel=0.02)
    assert ev["advantage_raw_overall"] > ev["advantage_overall"]  # the raw form counted it
    real = m.evaluate(_result({"agent": 1.5}, noise=0.004), "agent", floor=math.log(1.02))
    assert real["significant_workloads"] == len(WLS)
    assert real["advantage_overall"] == pytest.approx(real["advantage_raw_overall"])


def test_noise_counts_as_none_by_significance_too() -> None:
    # a 3% "speedup" in one workload drowned in 8% round-to-round noise
    speeds = dict.fromkeys(WLS, 1.0) | {WLS[0]: 1.03}
    ev = m.evaluate(_result({"agent": speeds}, noise=0.08, rounds=5), "agent", floor=0.0)
    assert ev["workload_p"][WLS[0]] > m.ALPHA and ev["significant_workloads"] <= 1


def test_oracle_advantage_ci_covers_zero_and_ratio_form() -> None:
    res = _result({"oracle": 2.0, "noop": 1.0}, noise=0.01)
    oracle, noop = m.evaluate(res, "oracle"), m.evaluate(res, "noop")
    lo, hi = oracle["advantage_ci"]
    assert lo <= 0.0 <= hi and hi - lo < 0.5
    assert oracle["advantage_ratio_overall"] == pytest.approx(1.0, abs=0.03)
    r_lo, r_hi = oracle["advantage_ratio_ci"]
    assert r_lo <= 1.0 <= r_hi
    assert oracle["speedup_significant"] and oracle["speedup"] == pytest.approx(2.0, rel=0.05)
    assert not noop["speedup_significant"]
    assert noop["advantage_overall"] == pytest.approx(1.0 - noop["expert_speedup"], rel=0.02)


def test_tests_are_selectable() -> None:
    res = _result({"agent": 1.5}, noise=0.01, rounds=6)
    for test in m.TESTS:
        ev = m.evaluate(res, "agent", test=test)
        assert ev["test"] == test and ev["significant_workloads"] == len(WLS), test
    with pytest.raises(ValueError):
        m.evaluate(res, "agent", test="z")
