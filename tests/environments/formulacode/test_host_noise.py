"""The machine probe that a timing run records before and after itself."""

from __future__ import annotations

import os

import pytest

from environments.formulacode import host_noise


def test_summarise_reports_median_spread_and_tail() -> None:
    summary = host_noise.summarise([0.010, 0.010, 0.010, 0.010, 0.020])
    assert summary["median_ms"] == pytest.approx(10.0)
    assert summary["p90_over_median"] == pytest.approx(2.0)
    assert summary["cv"] == pytest.approx(0.0044721 / 0.012, rel=1e-3)


def test_summarise_needs_two_timings() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        host_noise.summarise([0.01])


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs CPU affinity (Linux)")
def test_probe_times_each_cpu_and_restores_the_affinity() -> None:
    before = os.sched_getaffinity(0)
    cpu = min(before)
    result = host_noise.probe([cpu], reps=5, iterations=2_000)
    assert os.sched_getaffinity(0) == before
    assert list(result["cpus"]) == [str(cpu)]
    assert result["max_cv"] == result["cpus"][str(cpu)]["cv"] >= 0
    assert result["quiet"] is (result["max_cv"] <= host_noise.QUIET_CV)
    assert result["reps"] == 5 and result["iterations"] == 2_000
