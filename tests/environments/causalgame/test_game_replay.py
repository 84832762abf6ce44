"""A CausalGame is a function of its spec and action log: replay rebuilds it exactly."""

from __future__ import annotations

import json

import pytest

from environments.causalgame import Game, GameError


def _played() -> Game:
    game = Game("antenna_trap", seed=7)
    design, equipment = game.oracle_design()
    game.deploy(design, 10, equipment or None)
    with pytest.raises(GameError):
        game.deploy({"warp_def": 1}, 5)  # a rejected action changes nothing and is not logged
    game.deploy({**design, "engine_def": 5.0}, 7, equipment or None)
    return game


def test_replay_restores_state_and_generators() -> None:
    game = _played()
    log = json.loads(json.dumps(game.actions))  # what a checkpoint's store keeps
    assert [a["op"] for a in log] == ["deploy", "deploy"]
    rebuilt = Game(**json.loads(json.dumps(game.spec()))).replay(log)
    assert rebuilt.history == game.history
    assert rebuilt.drones_used == game.drones_used == 17
    # the generators continue identically: the next deploy draws the same flights
    design, equipment = game.oracle_design()
    assert rebuilt.deploy(design, 12, equipment or None) == game.deploy(design, 12,
                                                                         equipment or None)
    assert rebuilt.submit(design, equipment or None) == game.submit(design, equipment or None)
    assert rebuilt.actions == game.actions


def test_a_fresh_game_without_the_log_is_a_different_game() -> None:
    game = _played()
    fresh = Game(**game.spec())
    design, equipment = game.oracle_design()
    # the flights themselves differ (not only the budget counters)
    assert (fresh.deploy(design, 12, equipment or None)["results"]
            != game.deploy(design, 12, equipment or None)["results"])


def test_a_log_from_another_game_is_refused() -> None:
    log = _played().actions
    log[1] = {**log[1], "survived": log[1]["survived"] + 1}
    with pytest.raises(ValueError, match="not the game that wrote this log"):
        Game("antenna_trap", seed=7).replay(log)
    with pytest.raises(ValueError, match="fresh game"):
        _played().replay(log)
