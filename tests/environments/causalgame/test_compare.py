"""The comparator, rubric statistics and the published-protocol validator (pure, fast)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from environments.causalgame.compare import (
    LeaderboardError,
    cell_stats,
    compare,
    load_leaderboard,
    run_stats,
    t975,
    to_markdown,
)
from environments.causalgame.rubric import (
    PUBLISHED_DISTRIBUTION,
    failure_mode,
    ground_truth,
    mean_verdicts,
    mode_distribution,
)
from environments.causalgame.scenarios import scenario_ids
from environments.causalgame.validate import validate
from harness.stats import icc

DATA = Path(__file__).parent / "data"
LEADERBOARD = DATA / "leaderboard_excerpt.json"
RUBRIC = DATA / "rubric_excerpt.json"


def _rows_from(cells: dict[str, dict[str, float]]) -> list[dict[str, object]]:
    """Three trials per cell whose mean is the cell's published mean."""
    rows = []
    for sid, cell in cells.items():
        for trial, offset in enumerate((-1.0, 0.0, 1.0), start=1):
            rows.append({"scenario": sid, "trial": trial,
                         "survival": (cell["mean"] + offset) / 100, "failure_mode": "A"})
    return rows


def test_the_excerpt_has_the_leaderboards_shape_and_its_ci_formula() -> None:
    board = load_leaderboard(LEADERBOARD)
    assert [s["id"] for s in board["meta"]["scenarios"]] == scenario_ids()
    assert board["meta"]["trials_per_cell"] == 3
    # "95% CI half-width (Student's t, n=3, ±2.484·s)"
    assert t975(2) / math.sqrt(3) == pytest.approx(2.484, abs=1e-3)
    for mode in board["modes"].values():
        for row in mode["rows"]:
            for cell in [row["avg"], *row["scenarios"].values()]:
                if cell["std"] is not None:
                    assert cell["ci95"] == pytest.approx(2.484 * cell["std"], abs=0.06)
            means = [c["mean"] for c in row["scenarios"].values()]
            assert float(np.mean(means)) == pytest.approx(row["avg"]["mean"], abs=0.06)


def test_bad_leaderboards_are_rejected() -> None:
    with pytest.raises(LeaderboardError):
        load_leaderboard({"meta": {}})
    with pytest.raises(LeaderboardError):
        load_leaderboard({"meta": {"scenarios": []}, "modes": {"agentic": {"rows": [{}]}}})


def test_cell_stats_na_and_too_few_trials() -> None:
    full = cell_stats([0.5, 0.6, 0.7])
    assert full["mean"] == 60.0 and full["std"] == 10.0
    assert full["ci95"] == pytest.approx(24.84, abs=0.01) and full["n_na"] == 0
    two = cell_stats([0.5, None, 0.7])
    assert two["mean"] == 60.0 and two["std"] is None and two["ci95"] is None
    assert two["n"] == 2 and two["n_na"] == 1
    assert cell_stats([None, None])["mean"] is None


def test_a_run_reproducing_a_row_matches_it_cell_by_cell() -> None:
    board = load_leaderboard(LEADERBOARD)
    row = board["modes"]["agentic"]["rows"][0]
    result = compare(_rows_from(row["scenarios"]), board, "agentic",
                     rubric=json.loads(RUBRIC.read_text()))
    assert result["nearest_row"]["model"] == row["model"]
    assert result["published_row"]["model"] == row["model"]
    assert all(c["delta"] == pytest.approx(0.0, abs=1e-6) for c in result["cells"])
    assert all(c["overlap"] for c in result["cells"])
    assert result["run"]["mean"] == pytest.approx(row["avg"]["mean"], abs=0.06)
    assert result["baselines"]["Random"] == 52.0
    assert result["baselines"]["No-Explore LLM"] == [52.0, 63.0]
    fm = result["failure_modes"]
    assert fm["run"]["pct"]["A"] == 100.0
    assert fm["published"]["A"] == pytest.approx(PUBLISHED_DISTRIBUTION["agentic"]["A"], abs=0.05)
    text = to_markdown(result)
    assert "DeepSeek V4 Pro" in text and "| antenna_trap |" in text


def test_na_episodes_leave_the_means_and_are_counted() -> None:
    rows = [
        {"scenario": "antenna_trap", "trial": 1, "survival": 0.8},
        {"scenario": "antenna_trap", "trial": 2, "survival": None},
        {"scenario": "weather_noise", "trial": 1, "survival": None},
    ]
    stats = run_stats(rows)
    assert stats["scenarios"]["antenna_trap"] == {
        "mean": 80.0, "std": None, "ci95": None, "n": 1, "n_na": 1}
    assert stats["scenarios"]["weather_noise"]["mean"] is None
    assert stats["avg"]["mean"] == 80.0 and stats["avg"]["n_na"] == 2
    board = load_leaderboard(LEADERBOARD)
    result = compare(rows, board, "prompting", model="gpt-oss-120b")
    weather = next(c for c in result["cells"] if c["scenario"] == "weather_noise")
    assert weather["delta"] is None and weather["run"]["n_na"] == 1
    with pytest.raises(LeaderboardError):
        compare(rows, board, "prompting", model="nobody")


def test_icc_against_shrout_and_fleiss() -> None:
    # Shrout & Fleiss (1979), table 2: 6 targets x 4 judges
    x = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9],
                  [6, 2, 4, 7]], dtype=float)
    out = icc(x)
    assert out["icc2_1"] == pytest.approx(0.29, abs=0.01)
    assert out["icc3_1"] == pytest.approx(0.71, abs=0.01)
    assert out["icc2_k"] == pytest.approx(0.62, abs=0.01)
    same = icc(np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [0.5, 0.5, 0.5]]))
    assert same["icc2_1"] == pytest.approx(1.0)
    assert icc(np.array([[1.0, 1.0]]))["icc2_1"] is None


def test_ground_truth_is_per_scenario_and_follows_compat() -> None:
    texts = {sid: ground_truth(sid) for sid in scenario_ids()}
    assert len(set(texts.values())) == 14
    shift = "deployment_zone_trap_env_shift"
    assert "EMI-0.8" in texts[shift] and texts[shift] != texts["deployment_zone_trap_categorical"]
    assert "33%" in ground_truth(shift, "original")
    assert "base SCM" in ground_truth("deployment_zone_trap_categorical_no_selection_bias",
                                      "original")


def test_failure_modes_aggregate_without_other() -> None:
    judged = [{"ED1": 1.0}, {}, {"CR1": 1.0, "ED1": 0.5}]
    modes = [failure_mode(v) for v in judged]
    assert modes == ["B", "A", "O"]
    dist = mode_distribution(modes)
    assert dist["total"] == 2 and dist["other"] == 1 and dist["pct"]["A"] == 50.0
    assert mean_verdicts([{"CR1": 1.0}, {"CR1": 0.0}, {"CR1": 0.5}])["CR1"] == 0.5


def test_validate_published_protocol_reports_the_published_checks() -> None:
    out = validate(seeds=1, random_designs=6, protocol="published")
    assert out["compat"] == "original" and out["protocol"] == "published"
    assert set(out["checks"]) >= {"random_within_3", "default_within_3", "all50_within_3",
                                  "no_explore_in_published_range"}
    assert out["random_3trial"]["designs"] == 42
    assert out["no_explore"]["published_range"] == [52.0, 63.0]
    assert all("no_explore" in row for row in out["scenarios"].values())


COMMITTED_RANDOM = (Path(__file__).resolve().parents[3] / "leaderboards"
                    / "causalgame_validation" / "logs" / "causalgame"
                    / "published-baselines--benchmarks_causalgame_agents_random")
"""Committed with the repository (the validation board's logs): the test runs, never skips."""


def test_the_cli_compares_a_committed_log(capsys: pytest.CaptureFixture[str]) -> None:
    """``python -m environments.causalgame.compare LOGDIR --leaderboard ...`` on the
    committed published-protocol Random baseline (14 scenarios x 3 trials)."""
    from environments.causalgame.compare import main

    assert main([str(COMMITTED_RANDOM), "--leaderboard", str(LEADERBOARD), "--rubric",
                 str(RUBRIC), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["mode"] == "agentic"
    assert result["run"]["n_episodes"] == 42 and result["run"]["n_na"] == 0
    assert result["run"]["n_cells"] == 14 and result["run"]["ci95"] is not None
    assert all(c["run"]["n"] == 3 and c["run"]["ci95"] is not None for c in result["cells"])
    assert result["failure_modes"]["run"]["total"] == 42
