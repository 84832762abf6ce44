"""Exact verifiers of the open problems, against solutions built here independently."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from environments.open_problems import (
    PROBLEMS,
    autocorrelation_bound,
    verify_autocorrelation,
    verify_circle_packing,
)
from environments.open_problems.circle_packing import TOLERANCE

REPO = Path(__file__).resolve().parents[3]


def grid_packing() -> list[list[float]]:
    """25 circles of radius 0.1 on a 5x5 grid, plus a small one in the gap at (0.2, 0.2)."""
    circles = [[0.1 + 0.2 * i, 0.1 + 0.2 * j, 0.1] for j in range(5) for i in range(5)]
    gap = math.hypot(0.1, 0.1) - 0.1  # distance from the gap's centre to the 4 neighbours
    circles.append([0.2, 0.2, gap * 0.999])
    return circles


def test_accepts_an_independently_built_packing() -> None:
    packing = grid_packing()
    verdict = verify_circle_packing(packing)
    assert verdict.valid, verdict.reason
    assert verdict.score == pytest.approx(2.5 + packing[-1][2], abs=1e-12)


def test_rejects_overlap_with_reason() -> None:
    packing = grid_packing()
    packing[-1][2] = 0.05  # larger than the gap
    verdict = verify_circle_packing(packing)
    assert not verdict.valid and verdict.score is None
    assert "overlap" in verdict.reason and "25" in verdict.reason


def test_rejects_circle_outside_the_square() -> None:
    packing = grid_packing()
    packing[0][0] = 0.05  # radius 0.1 sticks out of the left wall
    verdict = verify_circle_packing(packing)
    assert not verdict.valid
    assert "leaves the unit square" in verdict.reason and "circle 0" in verdict.reason


def test_tolerance_is_the_stated_one() -> None:
    packing = grid_packing()
    packing[0][0] = 0.1 - TOLERANCE / 2  # touches the wall within tolerance
    assert verify_circle_packing(packing).valid
    packing[0][0] = 0.1 - 3 * TOLERANCE
    assert not verify_circle_packing(packing).valid


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ({"circles": []}, "expected a list"),
        ([[0.5, 0.5, 0.1]] * 25, "expected 26 circles, got 25"),
        ([[0.5, 0.5]] + [[0.5, 0.5, 0.0]] * 25, "not a [x, y, r] triple"),
        ([["0.5", 0.5, 0.1]] + [[0.5, 0.5, 0.0]] * 25, "not a number"),
        ([[True, 0.5, 0.1]] + [[0.5, 0.5, 0.0]] * 25, "not a number"),
        ([[float("nan"), 0.5, 0.1]] + [[0.5, 0.5, 0.0]] * 25, "not finite"),
        ([[0.5, 0.5, -0.1]] + [[0.5, 0.5, 0.0]] * 25, "negative radius"),
    ],
)
def test_rejects_malformed_packings(data: object, fragment: str) -> None:
    verdict = verify_circle_packing(data)
    assert not verdict.valid
    assert fragment in verdict.reason


def _bound_by_sampling(heights: np.ndarray, per_step: int = 400) -> float:
    """max(f*f)/(int f)^2 by dense sampling of f (independent of the knot formula)."""
    n = len(heights)
    dx = 0.5 / (n * per_step)
    f = np.repeat(heights, per_step)
    return float(np.convolve(f, f).max() * dx / (f.sum() * dx) ** 2)


def test_autocorrelation_constant_is_two() -> None:
    verdict = verify_autocorrelation([3.0] * 7)
    assert verdict.valid and verdict.score == pytest.approx(2.0, abs=1e-12)


def test_autocorrelation_matches_dense_sampling() -> None:
    heights = np.random.default_rng(1).uniform(0, 1, 6)
    exact = verify_autocorrelation(heights.tolist()).score
    assert exact == pytest.approx(autocorrelation_bound(heights))
    assert exact == pytest.approx(_bound_by_sampling(heights), rel=2e-3)


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ("1,2,3", "expected a list"),
        ([], "expected 1..100000 heights, got 0"),
        ([1.0, -0.5, 1.0], "height 1 is negative"),
        ([0.0, 0.0], "all heights are zero"),
        ([1.0, None], "not a number"),
        ([1e200, 1e200], "overflows"),
    ],
)
def test_autocorrelation_rejects_bad_functions(data: object, fragment: str) -> None:
    verdict = verify_autocorrelation(data)
    assert not verdict.valid and fragment in verdict.reason


def _cli(problem: str, path: Path) -> tuple[int, dict[str, object]]:
    done = subprocess.run(
        [sys.executable, "-m", "environments.open_problems.verify", problem, str(path), "--json"],
        capture_output=True, text=True, cwd=REPO, check=False,
    )
    return done.returncode, json.loads(done.stdout)


def test_cli_prints_json_verdicts(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(grid_packing()))
    rc, verdict = _cli("circle_packing", good)
    assert rc == 0 and verdict["valid"] is True and isinstance(verdict["score"], float)

    short = tmp_path / "short.json"
    short.write_text(json.dumps(grid_packing()[:20]))
    rc, verdict = _cli("circle_packing", short)
    assert rc == 1 and verdict == {"valid": False, "score": None,
                                   "reason": "malformed: expected 26 circles, got 20"}

    broken = tmp_path / "broken.json"
    broken.write_text("[[0.1, 0.2,")
    rc, verdict = _cli("first_autocorrelation", broken)
    assert rc == 1 and verdict["valid"] is False and "not JSON" in str(verdict["reason"])

    rc, verdict = _cli("circle_packing", tmp_path / "missing.json")
    assert rc == 1 and verdict["valid"] is False and "cannot read" in str(verdict["reason"])


@pytest.mark.skipif(shutil.which("python3") is None, reason="needs a python3 with numpy")
@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_initial_programs_write_valid_solutions(name: str, tmp_path: Path) -> None:
    problem = PROBLEMS[name]
    program = tmp_path / "program.py"
    program.write_text(problem.initial_program())
    subprocess.run([sys.executable, str(program)], cwd=tmp_path, check=True,
                   capture_output=True, timeout=120)
    verdict = problem.verify(json.loads((tmp_path / "solution.json").read_text()))
    assert verdict.valid, verdict.reason
    assert verdict.score is not None
    # valid, and far from the best known: there is something to evolve
    assert problem.better(problem.best_known, verdict.score)
