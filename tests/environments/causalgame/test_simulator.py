"""The simulator against the spec: reference survival rates, mechanics, seeds, misuse."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from environments.causalgame import Game, GameError, load_scenario, scenario_ids, survival_rate
from environments.causalgame.archivist import refusal_reason
from environments.causalgame.rubric import failure_mode, weighted_score
from environments.causalgame.sim import reduce_damage, simulate

PKG = Path(__file__).resolve().parents[3] / "environments" / "causalgame"


def test_fourteen_scenarios_from_data_files() -> None:
    ids = scenario_ids()
    assert len(ids) == 14 and ids[0] == "antenna_trap" and ids[-1] == "weather_noise"
    assert len(list((PKG / "data" / "scenarios").glob("*.json"))) == 14


def test_environment_package_never_imports_inspect() -> None:
    for path in PKG.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            assert not any(n.startswith("inspect_ai") for n in names), path


# spec 13.1 reference values (20,000 drones, MC error ~0.7 pt); we allow 2 points
@pytest.mark.parametrize(
    ("sid", "compat", "design", "equipment", "expected"),
    [
        ("antenna_trap", "original", {}, {}, 54.8),
        ("antenna_trap", "original", {"antenna_def": 0}, {}, 82.9),
        ("antenna_trap", "original", {"antenna_def": 0, "camera_def": 10, "gun_def": 10}, {}, 92.7),
        (
            "antenna_trap",
            "original",
            {"antenna_def": 30, "camera_def": 30, "gun_def": 30},
            {},
            35.5,
        ),
        ("deployment_zone_trap_categorical", "original", {}, {}, 49.9),
        ("deployment_zone_trap_categorical", "original", {"shield_def": 25}, {}, 61.2),
        (
            "deployment_zone_trap_categorical",
            "original",
            {},
            {"enhancement_module": "signal_filter"},
            69.0,
        ),
        (
            "deployment_zone_trap_categorical",
            "original",
            {"shield_def": 25},
            {"enhancement_module": "signal_filter"},
            80.6,
        ),
        ("deployment_zone_trap_categorical_no_selection_bias", "original", {}, {}, 71.6),
        ("deployment_zone_trap_env_shift", "original", {"shield_def": 50}, {}, 32.7),
        ("weather_noise", "original", {}, {}, 15.7),
        ("weather_noise", "original", {"antenna_def": 30, "engine_def": 30}, {}, 33.4),
    ],
)
def test_reference_survival(
    sid: str, compat: str, design: dict[str, float], equipment: dict[str, str], expected: float
) -> None:
    sc = load_scenario(sid, compat)
    rate = survival_rate(sc, design, 20_000, seed=11, equipment=equipment)
    assert abs(100 * rate - expected) < 2.0


def test_intended_mode_fixes_the_design_independent_scenarios() -> None:
    shift = load_scenario("deployment_zone_trap_env_shift", "intended")
    assert survival_rate(shift, {"shield_def": 40}, 5000, 1) > 0.65  # shield read correctly
    noselbias = load_scenario("deployment_zone_trap_categorical_no_selection_bias", "intended")
    assert survival_rate(noselbias, {}, 5000, 1) < 0.6  # zone SCM, not the flat base SCM


def test_same_seed_same_outcome_and_different_seed_differs() -> None:
    sc = load_scenario("antenna_trap")
    a = simulate(sc, {}, 500, np.random.default_rng(3))
    b = simulate(sc, {}, 500, np.random.default_rng(3))
    c = simulate(sc, {}, 500, np.random.default_rng(4))
    assert np.array_equal(a.survived, b.survived) and np.array_equal(a.hit_count, b.hit_count)
    assert not np.array_equal(a.hit_count, c.hit_count)
    g1, g2 = Game("weather_noise", seed=5), Game("weather_noise", seed=5)
    assert g1.deploy({"engine_def": 25}, 10) == g2.deploy({"engine_def": 25}, 10)
    assert g1.submit({"engine_def": 25}) == g2.submit({"engine_def": 25})


def test_damage_reduction_rule() -> None:
    out = reduce_damage(np.array([0.0, 10.0, 100.0]), np.array([50.0, 50.0, 10.0]), 0.9, 0.65)
    assert out.tolist() == [0.0, 4.0, 91.0]  # no damage stays 0; cap 65%; floor(0.9*10)=9


def test_selection_bias_hides_failed_history_but_counts_stay_true() -> None:
    game = Game("antenna_trap", seed=1)
    assert len(game.history) == 50
    visible = game.visible_history()
    assert 0 < len(visible) < 50 and all(r["status"] == "RETURNED" for r in visible)
    result = game.deploy({"antenna_def": 10}, 30)
    assert result["survived"] + result["destroyed"] == 30
    assert len(result["results"]) == result["survived"]
    open_game = Game("antenna_trap_no_selection_bias", seed=1)
    assert len(open_game.visible_history()) == 50
    assert Game("antenna_trap_no_history").history == []


def test_simpsons_history_cohorts() -> None:
    game = Game("antenna_trap_simpsons_paradox", seed=0)
    high = [r for r in game.history if r["design"]["antenna_def"] == 25]
    assert len(high) == 17  # i % 3 == 0 for i in 0..49
    zone = Game("deployment_zone_trap_categorical_simpsons_paradox", seed=0)
    eps = [
        r for r in zone.history if r.get("equipment", {}).get("enhancement_module") == "radar_boost"
    ]
    assert len(eps) == 17 and all(r["environment"]["altitude_band"] == "high" for r in eps)


def test_budgets_and_misuse_are_game_errors() -> None:
    game = Game("antenna_trap", seed=0)
    with pytest.raises(GameError, match="empty"):
        game.deploy({}, 1)
    with pytest.raises(GameError, match="Unknown component"):
        game.deploy({"laser_def": 5}, 1)
    with pytest.raises(GameError, match=">= 0"):
        game.deploy({"engine_def": -1}, 1)
    with pytest.raises(GameError, match="within"):
        game.deploy({"engine_def": 51}, 1)
    with pytest.raises(GameError, match="between 1 and 50"):
        game.deploy({"engine_def": 5}, 51)
    for _ in range(4):
        game.deploy({"engine_def": 20}, 50)
    with pytest.raises(GameError, match="Insufficient budget"):
        game.deploy({"engine_def": 20}, 1)
    game.submit({"antenna_def": 0})
    with pytest.raises(GameError, match="already over"):
        game.submit({"antenna_def": 0})
    lenient = Game("antenna_trap", compat="original")
    lenient.deploy({"engine_def": 80}, 1)  # the released server never enforced ranges


def test_deploy_call_limit() -> None:
    game = Game("weather_noise", seed=0)
    for _ in range(10):
        game.deploy({"engine_def": 20}, 1)
    with pytest.raises(GameError, match="budget exhausted"):
        game.deploy({"engine_def": 20}, 1)


def test_weather_noise_observations_are_noised_history_is_not() -> None:
    game = Game("weather_noise", seed=2)
    result = game.deploy({"engine_def": 30}, 50)
    assert all("def_remaining" in r for r in result["results"])
    noisy = [r["def_remaining"]["engine"] for r in result["results"]]
    assert len(set(noisy)) > 1  # the true DEF is 30 for every drone
    assert all(r["design"]["engine_def"] == 30 for r in game.history[-50:])


def test_archivist_matcher_refusals_and_budget() -> None:
    assert refusal_reason("What is the optimal design?")
    assert refusal_reason("x" * 501)
    game = Game("antenna_trap")
    answer = game.query("is there anything about the moon")
    assert answer["success"] and "moon_phase" in answer["discovered_variables"]
    assert game.query("tell me the answer")["success"] is False
    for _ in range(8):
        game.query("radio")
    with pytest.raises(GameError, match="exhausted"):
        game.query("radio")
    with pytest.raises(GameError, match="not available"):
        Game("deployment_zone_trap_categorical").query("emi")


def test_rubric_weights_and_failure_modes() -> None:
    full = {c: 1.0 for c in ("CR1", "CR2", "CR3", "ED1", "RQ1", "DU1")}
    assert weighted_score(full) == 1.0
    assert weighted_score({"CR1": 1.0}) == 5 / 16
    assert failure_mode({}) == "A"
    assert failure_mode({"ED1": 1.0}) == "B"
    assert failure_mode({"DU1": 1.0, "CR3": 0.5}) == "C"
    assert failure_mode(full) == "D"
