"""The 128-unit MLP DQN scout learns a fixed FrozenLake fast, seeded; the comparison runs."""

from __future__ import annotations

import numpy as np
import pytest

from environments.scout import FrozenLake, shortest_path, verify
from methods.scout.dqn import DQNConfig, board_features, greedy_dqn_rollout, train_dqn

LAKE = ["SFFF", "FHFH", "FFFH", "HFFG"]  # Gymnasium's 4x4 map


def test_dqn_solves_the_4x4_frozenlake_within_a_small_budget() -> None:
    game = FrozenLake(LAKE)
    run = train_dqn(game, DQNConfig(episodes=150), seed=0)
    assert run.trajectory.solved
    assert len(run.trajectory.actions) == len(shortest_path(game) or [])  # optimal (6)
    assert verify(game, run.trajectory.actions, strict=True).solved
    assert run.updates > 0 and 0 < run.transitions <= 150 * 40 + 16 * 40


def test_dqn_is_deterministic_by_seed() -> None:
    game = FrozenLake(LAKE)
    a = train_dqn(game, DQNConfig(episodes=30, stop_after_greedy_solves=0), seed=3)
    b = train_dqn(game, DQNConfig(episodes=30, stop_after_greedy_solves=0), seed=3)
    assert a.trajectory.actions == b.trajectory.actions
    assert (a.transitions, a.updates) == (b.transitions, b.updates)


def test_a_barely_trained_network_does_not_solve_it() -> None:
    """No learning (warm-up never reached): the greedy policy of a random net fails."""
    game = FrozenLake(LAKE)
    run = train_dqn(game, DQNConfig(episodes=1, max_steps=1, warmup=10_000, buffer=10_000,
                                    stop_after_greedy_solves=0), seed=0)
    assert run.updates == 0 and not run.trajectory.solved


def test_board_features_one_hot_the_grid() -> None:
    game = FrozenLake(LAKE)
    x = board_features(game, game.initial())
    assert x.shape == (16 * 95,) and x.sum() == 16  # one character per cell
    y = board_features(game, (0, 1))
    assert not np.array_equal(x, y)


def test_greedy_rollout_stops_on_a_loop() -> None:
    game = FrozenLake(LAKE)
    traj = greedy_dqn_rollout(game, lambda s: 2, 40)  # always "left": stuck at (0, 0)
    assert not traj.solved and len(traj.actions) == 1


@pytest.mark.parametrize("bad", [{"episodes": 0}, {"batch": 64, "warmup": 32},
                                 {"gamma": 0.0}])
def test_bad_configs_are_refused(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        DQNConfig(**bad)  # type: ignore[arg-type]


def test_compare_runs_both_scouts_on_the_same_instances() -> None:
    from methods.scout.compare import compare
    from methods.scout.qlearning import QConfig

    out = compare("harness/scout", '{"split": "test", "n": 1}', QConfig(episodes=20),
                  DQNConfig(episodes=10, stop_after_greedy_solves=0), seed=0)
    for scout in ("tabular_q", "dqn_mlp128"):
        total = out[scout]["total"]
        assert total["instances"] == 3 and set(out[scout]["games"]) == {
            "frozenlake", "sokoban", "sliding"}
        assert total["transitions"] > 0 and 0 <= total["solved_share"] <= 1
